import { describe, expect, it } from "vitest";
import { KindProvider, kindCreateArgs, kindDeleteArgs } from "../../src/cluster/kind-provider.js";
import {
  kwokctlCreateArgs,
  kwokctlEnv,
  kwokctlScaleArgs,
  KwokProvider,
} from "../../src/cluster/kwok-provider.js";
import { InfrastructureError } from "../../src/errors.js";
import type { CommandResult, CommandRunner } from "../../src/process/command-runner.js";
import { silentLogger } from "../../src/util/logger.js";
import { chmod, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const kwok = { provider: "kwok", name: "dev", binDir: "/bins", workDir: "/work/kwok" } as const;
const kind = { provider: "kind", name: "ci", kubeconfigPath: "/cache/kind/ci.kubeconfig" } as const;

/** Records what would run; answers with a fixed result. */
function recordingRunner(result: CommandResult = { exitCode: 0, stdout: "", stderr: "" }) {
  const calls: string[][] = [];
  const runner: CommandRunner = {
    run: (argv) => {
      calls.push([...argv]);
      return Promise.resolve(result);
    },
  };
  return { runner, calls };
}

/** A directory holding executables with the given names (contents irrelevant: the runner is fake). */
async function pathWith(...names: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "rc-path-"));
  for (const name of names) {
    await writeFile(join(dir, name), "#!/bin/sh\n");
    await chmod(join(dir, name), 0o755);
  }
  return dir;
}

describe("kwokctl arguments", () => {
  it("runs the binary runtime with every component from the bin dir and no user kubeconfig", () => {
    const args = kwokctlCreateArgs(kwok);
    const flag = (name: string) => args[args.indexOf(name) + 1];
    expect(args.slice(0, 2)).toEqual(["create", "cluster"]);
    expect(flag("--name")).toBe("dev");
    expect(flag("--runtime")).toBe("binary");
    expect(flag("--kubeconfig")).toBe("");
    expect(flag("--kube-apiserver-binary")).toBe("/bins/kube-apiserver");
    expect(flag("--kube-controller-manager-binary")).toBe("/bins/kube-controller-manager");
    expect(flag("--kube-scheduler-binary")).toBe("/bins/kube-scheduler");
    expect(flag("--kwok-controller-binary")).toBe("/bins/kwok");
    expect(flag("--etcd-binary")).toBe("/bins/etcd");
    expect(args).not.toContain("--disable");
  });

  it("adds one node with room for many pods", () => {
    const args = kwokctlScaleArgs(kwok);
    expect(args.slice(0, 6)).toEqual(["scale", "node", "--replicas", "1", "--name", "dev"]);
    expect(args).toContain(".allocatable.pods=1000");
  });

  it("isolates kwokctl's work dir and pins the Kubernetes version", () => {
    expect(kwokctlEnv(kwok)).toEqual({
      KWOK_WORKDIR: "/work/kwok",
      KWOK_KUBE_VERSION: "v1.35.4",
      KWOK_KUBECTL_BINARY: "/bins/kubectl",
    });
  });

  it("names every missing binary and how to build them", async () => {
    const binDir = await pathWith("kwokctl", "kwok");
    const { runner, calls } = recordingRunner();
    const provider = new KwokProvider({ ...kwok, binDir }, { runner, logger: silentLogger });
    const error = await provider.create().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InfrastructureError);
    expect(String(error)).toContain(
      "etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl not found",
    );
    expect(String(error)).toContain("hack/kube-binaries/build.sh");
    expect(calls).toEqual([]);
  });
});

describe("kind arguments", () => {
  it("creates with name, kubeconfig and wait, and the image only when given", () => {
    expect(kindCreateArgs(kind)).toEqual([
      "create",
      "cluster",
      "--name",
      "ci",
      "--kubeconfig",
      "/cache/kind/ci.kubeconfig",
      "--wait",
      "120s",
    ]);
    expect(kindCreateArgs({ ...kind, nodeImage: "kindest/node:v1.35.4" })).toContain("kindest/node:v1.35.4");
    expect(kindDeleteArgs(kind)).toEqual([
      "delete",
      "cluster",
      "--name",
      "ci",
      "--kubeconfig",
      "/cache/kind/ci.kubeconfig",
    ]);
  });

  it("fails with a clear error when kind is not installed", async () => {
    const { runner, calls } = recordingRunner();
    const provider = new KindProvider(kind, { runner, logger: silentLogger, path: await pathWith("docker") });
    await expect(provider.create()).rejects.toThrow("the kind command is not on PATH");
    expect(calls).toEqual([]);
  });

  it("fails with a clear error when docker is missing", async () => {
    const { runner } = recordingRunner();
    const provider = new KindProvider(kind, { runner, logger: silentLogger, path: await pathWith("kind") });
    await expect(provider.create()).rejects.toThrow("the docker command is not on PATH");
  });

  it("fails with docker's own words when no engine answers, before running kind", async () => {
    const { runner, calls } = recordingRunner({
      exitCode: 1,
      stdout: "",
      stderr: "Cannot connect to the Docker daemon at unix:///var/run/docker.sock.\n",
    });
    const dir = await pathWith("kind", "docker");
    const provider = new KindProvider(kind, { runner, logger: silentLogger, path: dir });
    const error = await provider.create().catch((e: unknown) => e);
    if (!(error instanceof InfrastructureError))
      throw new Error(`expected InfrastructureError, got ${String(error)}`);
    expect(error.details).toEqual(["Cannot connect to the Docker daemon at unix:///var/run/docker.sock."]);
    expect(calls).toEqual([[join(dir, "docker"), "info", "--format", "{{.ServerVersion}}"]]);
  });

  it("runs kind create with the constructed arguments once docker answers", async () => {
    const calls: string[][] = [];
    const dir = await pathWith("kind", "docker");
    const runner: CommandRunner = {
      run: (argv) => {
        calls.push([...argv]);
        // docker info succeeds; kind create fails, so no cluster access is attempted.
        const failing = argv[1] === "create";
        return Promise.resolve({
          exitCode: failing ? 1 : 0,
          stdout: "",
          stderr: failing ? "ERROR: boom\n" : "",
        });
      },
    };
    await mkdir(join(dir, "kube"), { recursive: true });
    const provider = new KindProvider(
      { ...kind, kubeconfigPath: join(dir, "kube", "config") },
      {
        runner,
        logger: silentLogger,
        path: dir,
      },
    );
    await expect(provider.create()).rejects.toThrow('kind create cluster "ci" exited with 1');
    expect(calls.map((c) => c.slice(1, 3))).toEqual([
      ["info", "--format"],
      ["get", "clusters"],
      ["create", "cluster"],
      ["delete", "cluster"], // a failed create of a name that was free is cleaned up
    ]);
  });

  it("refuses a name kind already has, and deletes nothing", async () => {
    const calls: string[][] = [];
    const dir = await pathWith("kind", "docker");
    const runner: CommandRunner = {
      run: (argv) => {
        calls.push([...argv]);
        const stdout = argv[1] === "get" ? "other\nci\n" : "";
        return Promise.resolve({ exitCode: 0, stdout, stderr: "" });
      },
    };
    const provider = new KindProvider(kind, { runner, logger: silentLogger, path: dir });
    await expect(provider.create()).rejects.toThrow('kind cluster "ci" already exists');
    expect(calls.map((c) => c[1])).toEqual(["info", "get"]);
  });
});
