import { copyFile, mkdir, readdir, readFile, rm } from "node:fs/promises";
import { pathExists } from "../util/files.js";
import { join } from "node:path";
import { describeError, InfrastructureError, UsageError, throwIfAborted } from "../errors.js";
import { KubeClient } from "../kube/kube-client.js";
import { tailLines, type CommandRunner } from "../process/command-runner.js";
import {
  findProcessesByArgument,
  isProcessAlive,
  signalProcess,
  waitForExit,
} from "../process/process-table.js";
import type { Logger } from "../util/logger.js";
import { KUBE_VERSION, type KwokClusterConfig } from "./cluster-config.js";
import type { ClusterAccess, ClusterProvider, CreateOptions } from "./cluster-provider.js";
import { waitForWorkloadReady } from "./cluster-readiness.js";

/** Binaries the kwok provider needs in `binDir`. */
export const KWOK_BINARIES = [
  "kwokctl",
  "kwok",
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kubectl",
] as const;

/** The control plane kwokctl runs; each writes `logs/<name>.log` and `pids/<name>.pid`. */
const COMPONENTS = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok-controller"];

const READY_TIMEOUT_MS = 90_000;

export interface KwokProviderDeps {
  readonly runner: CommandRunner;
  readonly logger: Logger;
}

/**
 * kwokctl's binary runtime: etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler and the kwok controller as local processes, with every
 * binary taken from `binDir` so nothing is downloaded. One simulated node is
 * added so Deployments get Pods that kwok marks Running and Ready.
 */
export class KwokProvider implements ClusterProvider {
  readonly provider = "kwok";

  constructor(
    private readonly config: KwokClusterConfig,
    private readonly deps: KwokProviderDeps,
  ) {}

  /** kwokctl's files for this cluster: kubeconfig, pids/, logs/. */
  get clusterDir(): string {
    return join(this.config.workDir, "clusters", this.config.name);
  }

  get kubeconfigPath(): string {
    return join(this.clusterDir, "kubeconfig.yaml");
  }

  async create(options: CreateOptions = {}): Promise<ClusterAccess> {
    const { signal } = options;
    const started = Date.now();
    await this.requireBinaries();
    if (await pathExists(this.clusterDir)) {
      throw new UsageError(
        "cluster/already-exists",
        `kwok cluster "${this.config.name}" already exists (${this.clusterDir}); delete it first: reconcile-conformance cluster delete --name ${this.config.name}`,
      );
    }
    // An abort kills kwokctl or ends a wait, which lands in the catch below.
    try {
      throwIfAborted(signal, "kwok cluster create");
      this.deps.logger.info(`kwok: starting cluster "${this.config.name}" (${COMPONENTS.join(", ")})`);
      const created = await this.kwokctl(kwokctlCreateArgs(this.config), signal);
      if (created.exitCode !== 0) {
        throwIfAborted(signal, "kwok cluster create");
        throw await this.startFailure(
          `kwokctl create cluster exited with ${created.exitCode}`,
          created.stderr,
        );
      }
      this.deps.logger.info("kwok: control plane running; adding a simulated node");
      const scaled = await this.kwokctl(kwokctlScaleArgs(this.config), signal);
      if (scaled.exitCode !== 0) {
        throwIfAborted(signal, "kwok cluster create");
        throw await this.startFailure(`kwokctl scale node exited with ${scaled.exitCode}`, scaled.stderr);
      }
      const access = this.access();
      const client = KubeClient.fromKubeconfig(access.kubeconfigPath, access.context);
      try {
        await waitForWorkloadReady(client, { timeoutMs: READY_TIMEOUT_MS, signal });
      } catch (error) {
        throwIfAborted(signal, "kwok cluster create");
        throw await this.startFailure(describeError(error), "", error);
      } finally {
        client.close();
      }
      this.deps.logger.info(
        `kwok: cluster "${this.config.name}" ready in ${((Date.now() - started) / 1000).toFixed(1)}s (${access.apiServerUrl})`,
      );
      return access;
    } catch (error) {
      // A half-started cluster is never left behind: its processes would hold ports and memory.
      await this.delete().catch((cleanupError: unknown) =>
        this.deps.logger.warn(`kwok: cleanup after failed create: ${String(cleanupError)}`),
      );
      throw error;
    }
  }

  async delete(): Promise<void> {
    // Read pids first: kwokctl removes the directory that records them.
    const pids = await this.processIds();
    if (pids.length === 0 && !(await pathExists(this.clusterDir))) return;
    this.deps.logger.info(`kwok: deleting cluster "${this.config.name}"`);
    const result = await this.kwokctl(["delete", "cluster", "--name", this.config.name]);
    if (result.exitCode !== 0) {
      this.deps.logger.warn(
        `kwokctl delete cluster exited with ${result.exitCode}: ${tailLines(result.stderr, 3).join(" | ")}`,
      );
    }
    // kwokctl sends SIGTERM and does not wait; make sure nothing it started outlives us.
    const survivors = await this.stopProcesses(pids);
    if (survivors.length > 0) {
      throw new InfrastructureError(
        "cluster/processes-survived",
        `kwok cluster "${this.config.name}": processes still running after SIGKILL: ${survivors.join(", ")}`,
      );
    }
    await rm(this.clusterDir, { recursive: true, force: true });
  }

  async collectLogs(directory: string): Promise<string[]> {
    const logsDir = join(this.clusterDir, "logs");
    const names = await readdir(logsDir).catch(() => [] as string[]);
    await mkdir(directory, { recursive: true });
    const written: string[] = [];
    for (const name of names) {
      const target = join(directory, name);
      await copyFile(join(logsDir, name), target);
      written.push(target);
    }
    return written;
  }

  /**
   * The cluster's processes: those kwokctl recorded in pids/, and any other
   * live process whose command line points into the cluster's directory (one
   * kwokctl started but had not recorded when it was interrupted).
   */
  async processIds(): Promise<number[]> {
    const pidsDir = join(this.clusterDir, "pids");
    const files = await readdir(pidsDir).catch(() => [] as string[]);
    const pids = new Set<number>();
    for (const file of files) {
      const pid = Number.parseInt((await readFile(join(pidsDir, file), "utf8")).trim(), 10);
      if (Number.isInteger(pid) && pid > 0) pids.add(pid);
    }
    for (const pid of findProcessesByArgument(`${this.clusterDir}/`)) pids.add(pid);
    return [...pids];
  }

  private access(): ClusterAccess {
    const context = `kwok-${this.config.name}`;
    const client = KubeClient.fromKubeconfig(this.kubeconfigPath, context);
    client.close();
    return {
      provider: "kwok",
      name: this.config.name,
      kubeconfigPath: this.kubeconfigPath,
      context,
      apiServerUrl: client.server,
    };
  }

  private async stopProcesses(pids: number[]): Promise<number[]> {
    const alive = () => pids.filter(isProcessAlive);
    if (
      (await waitForExit(alive, { description: "cluster processes to exit", timeoutMs: 10_000 })).length === 0
    ) {
      return [];
    }
    for (const pid of alive()) signalProcess(pid, "SIGKILL");
    return waitForExit(alive, { description: "killed cluster processes to exit", timeoutMs: 5_000 });
  }

  private async requireBinaries(): Promise<void> {
    const missing: string[] = [];
    for (const binary of KWOK_BINARIES) {
      if (!(await pathExists(join(this.config.binDir, binary)))) missing.push(binary);
    }
    if (missing.length > 0) {
      throw new InfrastructureError(
        "cluster/binaries-missing",
        `kwok provider: ${missing.join(", ")} not found in ${this.config.binDir}. Build them with hack/kube-binaries/build.sh, or point RECONCILE_CONFORMANCE_KUBE_BIN_DIR (or --bin-dir) at a directory that has them.`,
      );
    }
  }

  private kwokctl(args: string[], signal?: AbortSignal) {
    return this.deps.runner.run([join(this.config.binDir, "kwokctl"), ...args], {
      env: kwokctlEnv(this.config),
      signal,
      onStderrLine: (line) => this.deps.logger.debug(`kwokctl: ${line}`),
    });
  }

  /** An error that carries the tail of every component's log: why a start failed is in there. */
  private async startFailure(
    message: string,
    kwokctlStderr: string,
    cause?: unknown,
  ): Promise<InfrastructureError> {
    const details = tailLines(kwokctlStderr, 15).map((line) => `kwokctl: ${line}`);
    for (const component of COMPONENTS) {
      const log = await readFile(join(this.clusterDir, "logs", `${component}.log`), "utf8").catch(() => "");
      details.push(...tailLines(log, 8).map((line) => `${component}: ${line}`));
    }
    return new InfrastructureError(
      "cluster/start-failed",
      `kwok cluster "${this.config.name}" did not start: ${message}`,
      details,
      {
        cause,
      },
    );
  }
}

/** Arguments of `kwokctl create cluster`: every binary local, no kubeconfig of the user's touched. */
export function kwokctlCreateArgs(config: KwokClusterConfig): string[] {
  const bin = (name: string) => join(config.binDir, name);
  return [
    "create",
    "cluster",
    "--name",
    config.name,
    "--runtime",
    "binary",
    // An empty path keeps kwokctl from merging a context into ~/.kube/config.
    "--kubeconfig",
    "",
    "--kube-apiserver-binary",
    bin("kube-apiserver"),
    "--kube-controller-manager-binary",
    bin("kube-controller-manager"),
    "--kube-scheduler-binary",
    bin("kube-scheduler"),
    "--kwok-controller-binary",
    bin("kwok"),
    "--etcd-binary",
    bin("etcd"),
    "--wait",
    "60s",
  ];
}

/**
 * Arguments of `kwokctl scale node`: one simulated node. Its template's
 * defaults (110 pods, a /24 pod CIDR) run out in a long run or a test suite
 * that keeps its namespaces; a kwok node costs nothing per pod, so allow many.
 */
export function kwokctlScaleArgs(config: KwokClusterConfig): string[] {
  return [
    "scale",
    "node",
    "--replicas",
    "1",
    "--name",
    config.name,
    "--param",
    ".allocatable.pods=1000",
    "--param",
    '.podCIDRs=["10.0.0.0/16"]',
  ];
}

/** Environment for kwokctl: our own work directory and the Kubernetes version the binaries are. */
export function kwokctlEnv(config: KwokClusterConfig): Record<string, string> {
  return {
    KWOK_WORKDIR: config.workDir,
    KWOK_KUBE_VERSION: KUBE_VERSION,
    KWOK_KUBECTL_BINARY: join(config.binDir, "kubectl"),
  };
}
