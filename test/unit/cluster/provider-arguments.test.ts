import { describe, expect, it } from "vitest";
import {
  KindProvider,
  kindCreateArgs,
  kindDeleteArgs,
  removeIfEmptyKubeconfig,
} from "../../../src/cluster/kind-provider.js";
import {
  KWOK_BINARIES,
  KWOK_PORT_OPTIONS,
  kwokctlConfiguration,
  kwokctlConfigurationYaml,
  kwokctlCreateArgs,
  kwokctlEnv,
  kwokctlScaleArgs,
  KwokProvider,
  kwokPortLockPath,
  type KwokPorts,
} from "../../../src/cluster/kwok-provider.js";
import { InfrastructureError } from "../../../src/errors.js";
import type { CommandResult, CommandRunner } from "../../../src/process/command-runner.js";
import { ephemeralPortRange } from "../../../src/cluster/port-reservation.js";
import { pathExists } from "../../../src/util/files.js";
import { silentLogger } from "../../../src/util/logger.js";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { pathWith } from "../../support/executables.js";

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

const ports: KwokPorts = {
  etcdPort: 20001,
  etcdPeerPort: 20002,
  kubeApiserverPort: 20003,
  kubeControllerManagerPort: 20004,
  kubeSchedulerPort: 20005,
  kwokControllerPort: 20006,
};

describe("kwokctl arguments", () => {
  it("runs the binary runtime with every component from the bin dir and no user kubeconfig", () => {
    const args = kwokctlCreateArgs(kwok, "/tmp/rc/kwokctl.yaml");
    const flag = (name: string) => args[args.indexOf(name) + 1];
    expect(args.slice(0, 3)).toEqual(["create", "cluster", "--config=/tmp/rc/kwokctl.yaml"]);
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

  it("isolates kwokctl's work dir, pins the Kubernetes version and blanks port overrides", () => {
    expect(kwokctlEnv(kwok)).toEqual({
      KWOK_WORKDIR: "/work/kwok",
      KWOK_KUBE_VERSION: "v1.35.4",
      KWOK_KUBECTL_BINARY: "/bins/kubectl",
      KWOK_ETCD_PORT: "",
      KWOK_KUBE_APISERVER_PORT: "",
      KWOK_KUBE_CONTROLLER_MANAGER_PORT: "",
      KWOK_KUBE_SCHEDULER_PORT: "",
      KWOK_CONTROLLER_PORT: "",
    });
  });

  it("configures loopback only and every port of the binary runtime, nothing else", () => {
    expect(kwokctlConfiguration(ports)).toEqual({
      apiVersion: "config.kwok.x-k8s.io/v1alpha1",
      kind: "KwokctlConfiguration",
      options: {
        bindAddress: "127.0.0.1",
        etcdPort: 20001,
        etcdPeerPort: 20002,
        kubeApiserverPort: 20003,
        kubeControllerManagerPort: 20004,
        kubeSchedulerPort: 20005,
        kwokControllerPort: 20006,
      },
    });
    expect(KWOK_PORT_OPTIONS).toHaveLength(6);
  });

  it("writes the configuration as one YAML document with numbers, not strings", () => {
    const documents = parseAllDocuments(kwokctlConfigurationYaml(ports));
    expect(documents).toHaveLength(1);
    expect(documents[0]?.toJS()).toEqual(kwokctlConfiguration(ports));
  });

  it("keeps the port lock in the kit's kwok work dir", () => {
    expect(kwokPortLockPath(kwok)).toBe("/work/kwok/ports.lock");
  });

  it("names every missing binary and how to get them", async () => {
    const binDir = await pathWith("kwokctl", "kwok");
    const { runner, calls } = recordingRunner();
    const provider = new KwokProvider({ ...kwok, binDir }, { runner, logger: silentLogger });
    const error = await provider.create().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InfrastructureError);
    expect(String(error)).toContain(
      "etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl not found",
    );
    expect(String(error)).toContain("(--binaries auto, download or build)");
    expect(calls).toEqual([]);
  });

  it("hands kwokctl a loopback configuration with every port, and releases the port lock when kwokctl fails", async () => {
    const binDir = await pathWith(...KWOK_BINARIES);
    const workDir = await mkdtemp(join(tmpdir(), "rc-kwok-work-"));
    const lockPath = join(workDir, "ports.lock");
    const seen: { argv: string[]; config: string; lockHeld: boolean }[] = [];
    const runner: CommandRunner = {
      run: async (argv) => {
        const configFlag = argv.find((arg) => arg.startsWith("--config="));
        seen.push({
          argv: [...argv],
          config: configFlag ? await readFile(configFlag.slice("--config=".length), "utf8") : "",
          lockHeld: await pathExists(lockPath),
        });
        return { exitCode: 1, stdout: "", stderr: "boom\n" };
      },
    };
    const provider = new KwokProvider({ ...kwok, binDir, workDir }, { runner, logger: silentLogger });
    await expect(provider.create()).rejects.toThrow("kwokctl create cluster exited with 1");

    expect(seen.map((call) => call.argv.slice(1, 3))).toEqual([["create", "cluster"]]);
    expect(seen[0]?.lockHeld).toBe(true);
    expect(await pathExists(lockPath)).toBe(false);
    const written: unknown = parseYaml(seen[0]?.config ?? "");
    expect(written).toMatchObject({
      apiVersion: "config.kwok.x-k8s.io/v1alpha1",
      kind: "KwokctlConfiguration",
      options: { bindAddress: "127.0.0.1" },
    });
    const options: Record<string, unknown> =
      typeof written === "object" &&
      written !== null &&
      "options" in written &&
      typeof written.options === "object"
        ? Object.fromEntries(Object.entries(written.options ?? {}))
        : {};
    const ports = KWOK_PORT_OPTIONS.map((option) => options[option]);
    expect(new Set(ports).size).toBe(KWOK_PORT_OPTIONS.length);
    const ephemeral = await ephemeralPortRange();
    for (const port of ports) {
      if (typeof port !== "number") throw new Error(`not a port: ${String(port)}`);
      expect(port < ephemeral.first || port > ephemeral.last).toBe(true);
    }
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

describe("KindProvider.delete", () => {
  const kindConfig = { provider: "kind" as const, name: "ci", kubeconfigPath: "/tmp/rc-kind-delete/config" };

  it("says a cluster kind does not list is absent, and deletes nothing", async () => {
    const calls: string[][] = [];
    const dir = await pathWith("kind", "docker");
    const runner: CommandRunner = {
      run: (argv) => {
        calls.push([...argv]);
        return Promise.resolve({ exitCode: 0, stdout: argv[1] === "get" ? "other\n" : "", stderr: "" });
      },
    };
    const provider = new KindProvider(kindConfig, { runner, logger: silentLogger, path: dir });
    expect(await provider.delete()).toBe("absent");
    expect(calls.map((c) => c[1])).toEqual(["get"]);
  });

  it("deletes a cluster kind lists, and says so", async () => {
    const calls: string[][] = [];
    const dir = await pathWith("kind", "docker");
    const runner: CommandRunner = {
      run: (argv) => {
        calls.push([...argv]);
        return Promise.resolve({ exitCode: 0, stdout: argv[1] === "get" ? "other\nci\n" : "", stderr: "" });
      },
    };
    const provider = new KindProvider(kindConfig, { runner, logger: silentLogger, path: dir });
    expect(await provider.delete()).toBe("deleted");
    expect(calls.map((c) => c.slice(1, 3))).toEqual([
      ["get", "clusters"],
      ["delete", "cluster"],
    ]);
  });
});

describe("removeIfEmptyKubeconfig", () => {
  it("removes the kit's own kubeconfig once kind's delete emptied it, and keeps one that names other clusters", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rc-kubeconfig-"));
    // What kind leaves in the file it was given once the cluster is deleted.
    const emptied = join(dir, "rc-run-1.kubeconfig");
    await writeFile(
      emptied,
      'apiVersion: v1\nclusters: null\ncontexts: null\ncurrent-context: ""\nkind: Config\npreferences: {}\nusers: null\n',
    );
    const shared = join(dir, "shared.kubeconfig");
    await writeFile(
      shared,
      "apiVersion: v1\nkind: Config\nclusters:\n- name: other\n  cluster: { server: https://x }\ncontexts: []\nusers: []\n",
    );
    const blank = join(dir, "blank.kubeconfig");
    await writeFile(blank, "");
    for (const path of [emptied, shared, blank]) await removeIfEmptyKubeconfig(path);
    expect([await pathExists(emptied), await pathExists(shared), await pathExists(blank)]).toEqual([
      false,
      true,
      false,
    ]);
    await removeIfEmptyKubeconfig(join(dir, "never-written")); // nothing to remove: no error
  });
});
