import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { cacheRoot, defaultKubeBinDir, KUBE_VERSION } from "../cluster/cluster-config.js";
import { ExitCode } from "../errors.js";
import { findExecutable } from "../process/command-runner.js";
import {
  binariesMode,
  inspectBinDir,
  machineFacts,
  planKubeBinaries,
  probeReleaseDownloads,
} from "../tools/kube-binaries.js";
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
export async function doctor(context: CommandContext, options: DoctorOptions = {}): Promise<ExitCode> {
  const findings = await examine(context, options);
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

/** doctor's flags: the same --bin-dir and --binaries a run takes, so it answers for that run. */
export interface DoctorOptions {
  readonly binDir?: string;
  readonly binaries?: string;
}

export async function examine(context: CommandContext, options: DoctorOptions = {}): Promise<Finding[]> {
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

  const { finding: binaries, needsGo } = await binariesFinding(context, options);
  findings.push(binaries);

  const go = await findExecutable("go", path);
  findings.push({
    status: go ? "ok" : needsGo ? "missing" : "warning",
    what: "go",
    detail: go
      ? (await runner.run([go, "version"])).stdout.trim()
      : "not on PATH: needed only to build the kube binaries from Go modules",
    required: needsGo,
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

/**
 * The kube binaries line: what a run would use, download or build, and
 * why; a download is tried with one small request, so "auto" says whether
 * it would download or fall back to the build.
 */
async function binariesFinding(
  context: CommandContext,
  options: DoctorOptions,
): Promise<{ finding: Finding; needsGo: boolean }> {
  const { environment, runner } = context;
  const binDir = options.binDir ?? defaultKubeBinDir(environment);
  const mode = binariesMode(options.binaries, environment.env, "--binaries");
  const facts = await machineFacts(environment.env);
  const state = await inspectBinDir(binDir);
  const plan = planKubeBinaries(binDir, mode, state, facts);
  const what = "kube binaries";
  switch (plan.action) {
    case "use": {
      const version = await runner.run([join(binDir, "kube-apiserver"), "--version"]);
      const reported = version.stdout.trim();
      return {
        finding: {
          status: reported === `Kubernetes ${KUBE_VERSION}` ? "ok" : "warning",
          what,
          detail: `${plan.why} (${reported || "kube-apiserver --version failed"})`,
          required: true,
        },
        needsGo: false,
      };
    }
    case "build":
      return {
        finding: {
          status: plan.problem ? "missing" : "ok",
          what,
          detail: plan.problem
            ? `${plan.why}: cannot build them: ${plan.problem}`
            : state.origin === "build" && state.missing.length === 0
              ? `the next run runs the Go build (${plan.why}): seconds while it is current`
              : `the next run builds them from Go modules (${plan.why}; tens of minutes the first time, on 2 cores)`,
          required: true,
        },
        needsGo: true,
      };
    case "download": {
      if (plan.problem || "unsupported" in facts.platform) {
        return {
          finding: { status: "missing", what, detail: `${plan.why}: ${plan.problem ?? ""}`, required: true },
          needsGo: false,
        };
      }
      const unreachable = await probeReleaseDownloads(environment.env, facts.platform);
      if (!unreachable) {
        return {
          finding: {
            status: "ok",
            what,
            detail: `the next run downloads the pinned releases and checks their SHA-256 (${plan.why}; the release sites answer)`,
            required: true,
          },
          needsGo: false,
        };
      }
      return {
        finding: plan.fallback
          ? {
              status: "warning",
              what,
              detail: `${plan.why}; the release downloads are unreachable (${unreachable}): the next run builds them from Go modules instead (tens of minutes the first time)`,
              required: true,
            }
          : {
              status: "missing",
              what,
              detail: `${plan.why}; the release downloads are unreachable (${unreachable}), and ${mode === "download" ? "--binaries download does not build" : "they cannot be built here (no Go or no build script)"}`,
              required: true,
            },
        needsGo: plan.fallback === "build",
      };
    }
  }
}
