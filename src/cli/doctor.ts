import { readdir } from "node:fs/promises";
import { pathExists } from "../util/files.js";
import { join } from "node:path";
import { cacheRoot, defaultKubeBinDir, KUBE_VERSION } from "../cluster/cluster-config.js";
import { KWOK_BINARIES } from "../cluster/kwok-provider.js";
import { ExitCode } from "../errors.js";
import { findExecutable } from "../process/command-runner.js";
import type { CommandContext } from "./main.js";

/** One line of the doctor's table. `required` findings decide the exit code. */
export interface Finding {
  readonly status: "ok" | "missing" | "warning";
  readonly what: string;
  readonly detail: string;
  readonly required: boolean;
}

const MIN_NODE: readonly [number, number] = [22, 19];

/** Checks what the default (kwok) path and the optional kind path need; prints a table to stdout. */
export async function doctor(context: CommandContext): Promise<ExitCode> {
  const findings = await examine(context);
  const width = Math.max(...findings.map((f) => f.what.length));
  for (const f of findings) {
    const mark = f.status === "ok" ? "ok     " : f.status === "missing" ? "MISSING" : "warning";
    context.stdout.write(`${mark}  ${f.what.padEnd(width)}  ${f.detail}\n`);
  }
  const blocking = findings.filter((f) => f.required && f.status === "missing");
  if (blocking.length > 0) {
    context.logger.info(
      `doctor: the default kwok provider cannot run: ${blocking.map((f) => f.what).join(", ")} missing`,
    );
    return ExitCode.infrastructure;
  }
  return ExitCode.ok;
}

export async function examine(context: CommandContext): Promise<Finding[]> {
  const { environment, runner } = context;
  const findings: Finding[] = [];
  const path = environment.env.PATH;

  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  const nodeOk = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
  findings.push({
    status: nodeOk ? "ok" : "missing",
    what: "node",
    detail: nodeOk
      ? `v${process.versions.node}`
      : `v${process.versions.node} is too old: need >= ${MIN_NODE.join(".")} (24 recommended; scripts/setup.sh installs it)`,
    required: true,
  });

  const binDir = defaultKubeBinDir(environment);
  const missing: string[] = [];
  for (const binary of KWOK_BINARIES) {
    if (!(await pathExists(join(binDir, binary)))) missing.push(binary);
  }
  if (missing.length > 0) {
    findings.push({
      status: "missing",
      what: "kube binaries",
      detail: `${missing.join(", ")} not in ${binDir}: run hack/kube-binaries/build.sh (needs Go), or set RECONCILE_CONFORMANCE_KUBE_BIN_DIR`,
      required: true,
    });
  } else {
    const version = await runner.run([join(binDir, "kube-apiserver"), "--version"]);
    const reported = version.stdout.trim();
    findings.push({
      status: reported === `Kubernetes ${KUBE_VERSION}` ? "ok" : "warning",
      what: "kube binaries",
      detail: `${binDir} (${reported || "kube-apiserver --version failed"})`,
      required: true,
    });
  }

  const go = await findExecutable("go", path);
  findings.push({
    status: go ? "ok" : missing.length > 0 ? "missing" : "warning",
    what: "go",
    detail: go
      ? (await runner.run([go, "version"])).stdout.trim()
      : "not on PATH: needed only to build the kube binaries (hack/kube-binaries/build.sh)",
    required: missing.length > 0,
  });

  const kind = await findExecutable("kind", path);
  findings.push({
    status: kind ? "ok" : "warning",
    what: "kind",
    detail: kind ? kind : "not on PATH: needed only for --provider kind",
    required: false,
  });
  const docker = await findExecutable("docker", path);
  const engine = docker
    ? await runner.run([docker, "info", "--format", "{{.ServerVersion}}"], { timeoutMs: 10_000 })
    : undefined;
  findings.push({
    status: engine?.exitCode === 0 ? "ok" : "warning",
    what: "docker engine",
    detail:
      engine?.exitCode === 0
        ? `server ${engine.stdout.trim()}`
        : `${docker ? "docker info failed" : "docker not on PATH"}: needed only for --provider kind`,
    required: false,
  });

  const clustersDir = join(cacheRoot(environment), "kwok", "clusters");
  const leftovers = await readdir(clustersDir).catch(() => [] as string[]);
  for (const name of leftovers) {
    findings.push({
      status: "warning",
      what: `kwok cluster ${name}`,
      detail: `still exists (${join(clustersDir, name)}): remove it with reconcile-conformance cluster delete --name ${name}`,
      required: false,
    });
  }
  return findings;
}
