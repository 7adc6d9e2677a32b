import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  currentOwner,
  kwokRecordPath,
  ownerRecordEnvEntry,
  OWNER_RECORD_ENV,
  removeRecord,
  writeRecord,
} from "../cleanup/ownership.js";
import { pathExists } from "../util/files.js";
import { describeError, InfrastructureError, UsageError, throwIfAborted } from "../errors.js";
import { KubeClient } from "../kube/kube-client.js";
import { tailLines, type CommandRunner } from "../process/command-runner.js";
import {
  findProcessesByArgument,
  findProcessesByEnvironment,
  isProcessAlive,
  processCommandLine,
  signalProcess,
  waitForExit,
} from "../process/process-table.js";
import type { Logger } from "../util/logger.js";
import type { KwokClusterConfig } from "./cluster-config.js";
import type { ClusterAccess, ClusterProvider, CreateOptions, DeleteOutcome } from "./cluster-provider.js";
import { waitForWorkloadReady } from "./cluster-readiness.js";
import {
  KWOK_BIND_ADDRESS,
  KWOK_PORT_OPTIONS,
  kwokctlConfigurationYaml,
  kwokctlCreateArgs,
  kwokctlEnv,
  kwokctlScaleArgs,
  type KwokPortOption,
  type KwokPorts,
} from "./kwokctl-arguments.js";

// Its importers name them from here, with the provider.
export {
  KWOK_BIND_ADDRESS,
  KWOK_PORT_OPTIONS,
  kwokctlConfiguration,
  kwokctlConfigurationYaml,
  kwokctlCreateArgs,
  kwokctlEnv,
  kwokctlScaleArgs,
  type KwokPortOption,
  type KwokPorts,
} from "./kwokctl-arguments.js";
import { acquireLock, pickFreePorts, waitForListening, type HeldLock } from "./port-reservation.js";

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

/**
 * How long a create waits for the port lock. A holder keeps it for one
 * `kwokctl create cluster` (seconds; at worst kwokctl's own waits, about
 * three minutes), so this only runs out when a holder hangs.
 */
const PORT_LOCK_TIMEOUT_MS = 300_000;

/** How long the components get, once kwokctl has returned, to listen on their ports. */
const LISTEN_TIMEOUT_MS = 60_000;

/** What listens on each port, for messages. */
export const KWOK_PORT_LISTENERS: Readonly<Record<KwokPortOption, string>> = {
  etcdPort: "etcd",
  etcdPeerPort: "etcd (peer)",
  kubeApiserverPort: "kube-apiserver",
  kubeControllerManagerPort: "kube-controller-manager",
  kubeSchedulerPort: "kube-scheduler",
  kwokControllerPort: "kwok-controller",
};

export interface KwokProviderDeps {
  readonly runner: CommandRunner;
  readonly logger: Logger;
}

/**
 * kwokctl's binary runtime: etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler and the kwok controller as local processes, with every
 * binary taken from `binDir` so nothing is downloaded. One simulated node is
 * added so Deployments get Pods that kwok marks Running and Ready. Every
 * component listens on 127.0.0.1 only, on ports the kit picks under a
 * machine-wide lock, so clusters can be created side by side.
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

  /** Which kit process started this cluster (src/cleanup/ownership.ts); beside kwokctl's clusters/, not in it. */
  get recordPath(): string {
    return kwokRecordPath(this.config.workDir, this.config.name);
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
    // Before anything starts: a kit killed with SIGKILL from here on leaves this record behind,
    // naming a dead owner, and `clean` finds the cluster by it.
    await writeRecord(this.recordPath, {
      version: 1,
      kind: "kwok-cluster",
      name: this.config.name,
      owner: currentOwner(),
      createdAt: new Date().toISOString(),
      binDir: this.config.binDir,
    });
    // An abort kills kwokctl or ends a wait, which lands in the catch below.
    try {
      throwIfAborted(signal, "kwok cluster create");
      this.deps.logger.info(`kwok: starting cluster "${this.config.name}" (${COMPONENTS.join(", ")})`);
      await this.startControlPlane(signal);
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

  async delete(): Promise<DeleteOutcome> {
    // Read pids first: kwokctl removes the directory that records them.
    const pids = await this.processIds();
    if (pids.length === 0 && !(await pathExists(this.clusterDir))) {
      await removeRecord(this.recordPath);
      return "absent";
    }
    this.deps.logger.info(`kwok: deleting cluster "${this.config.name}"`);
    // Whatever kwokctl makes of it (a missing binary, a half-created cluster it does not know),
    // the processes are stopped and the directory removed below.
    try {
      const result = await this.kwokctl(["delete", "cluster", "--name", this.config.name]);
      if (result.exitCode !== 0) {
        this.deps.logger.warn(
          `kwokctl delete cluster exited with ${result.exitCode}: ${tailLines(result.stderr, 3).join(" | ")}`,
        );
      }
    } catch (error) {
      this.deps.logger.warn(`kwokctl delete cluster failed: ${describeError(error)}`);
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
    await removeRecord(this.recordPath);
    return "deleted";
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
   * The cluster's processes: those kwokctl recorded in pids/, any other live
   * process whose command line points into the cluster's directory (one
   * kwokctl started but had not recorded when it was interrupted), and any
   * that carries the cluster's ownership mark (a kwokctl of the kit still at
   * work on it).
   */
  async processIds(): Promise<number[]> {
    const pidsDir = join(this.clusterDir, "pids");
    const files = await readdir(pidsDir).catch(() => [] as string[]);
    const pids = new Set<number>();
    const fragment = `${this.clusterDir}/`;
    for (const file of files) {
      const pid = Number.parseInt((await readFile(join(pidsDir, file), "utf8")).trim(), 10);
      if (!Number.isInteger(pid) || pid <= 0) continue;
      // A pid file outlives its process: after a reboot its pid may be anybody's. Where the
      // command line can be read, only a process still pointing into the cluster counts.
      const commandLine = processCommandLine(pid);
      if (commandLine === undefined || commandLine.includes(fragment)) pids.add(pid);
    }
    for (const pid of findProcessesByArgument(fragment)) pids.add(pid);
    for (const pid of findProcessesByEnvironment(ownerRecordEnvEntry(this.recordPath))) pids.add(pid);
    return [...pids];
  }

  /**
   * Runs `kwokctl create cluster` with every port chosen by the kit, under
   * the machine-wide port lock, and holds the lock until every component
   * listens: only then can the next create on this machine see those ports
   * as taken.
   */
  private async startControlPlane(signal: AbortSignal | undefined): Promise<void> {
    const lock = await acquireLock(kwokPortLockPath(this.config), {
      timeoutMs: PORT_LOCK_TIMEOUT_MS,
      purpose: `kwok cluster "${this.config.name}" starting`,
      signal,
      onWait: (holder) => this.deps.logger.info(`kwok: waiting for the port lock, ${holder}`),
    });
    const locked = Date.now();
    const held = () => `${((Date.now() - locked) / 1000).toFixed(1)}s`;
    let configDir: string | undefined;
    try {
      configDir = await mkdtemp(join(tmpdir(), "rc-kwokctl-"));
      const ports = await pickKwokPorts();
      this.deps.logger.debug(
        `kwok: ports ${KWOK_PORT_OPTIONS.map((option) => `${KWOK_PORT_LISTENERS[option]} ${ports[option]}`).join(", ")}`,
      );
      const configPath = join(configDir, "kwokctl.yaml");
      await writeFile(configPath, kwokctlConfigurationYaml(ports));
      const created = await this.kwokctl(kwokctlCreateArgs(this.config, configPath), signal);
      if (created.exitCode !== 0) {
        throwIfAborted(signal, "kwok cluster create");
        throw await this.startFailure(
          `kwokctl create cluster exited with ${created.exitCode}`,
          created.stderr,
        );
      }
      this.deps.logger.debug(`kwok: kwokctl create cluster returned after ${held()}`);
      // kwokctl returns once the API server answers; the scheduler, the
      // controller manager and kwok may not have bound their ports yet.
      try {
        await waitForListening(
          Object.fromEntries(KWOK_PORT_OPTIONS.map((option) => [KWOK_PORT_LISTENERS[option], ports[option]])),
          { host: KWOK_BIND_ADDRESS, timeoutMs: LISTEN_TIMEOUT_MS, signal },
        );
      } catch (error) {
        throwIfAborted(signal, "kwok cluster create");
        throw await this.startFailure(describeError(error), "", error);
      }
      this.deps.logger.debug(`kwok: every component listening after ${held()}; releasing the port lock`);
    } finally {
      await this.release(lock);
      // kwokctl keeps its own copy (kwok.yaml in the cluster's directory); this one is done with.
      if (configDir !== undefined) await rm(configDir, { recursive: true, force: true }).catch(() => {});
    }
  }

  /** Releases the port lock; a failure there is logged, never allowed to hide the outcome of the create. */
  private async release(lock: HeldLock): Promise<void> {
    try {
      await lock.release();
    } catch (error) {
      this.deps.logger.warn(`kwok: releasing the port lock ${lock.path}: ${describeError(error)}`);
    }
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
        `kwok provider: ${missing.join(", ")} not found in ${this.config.binDir}. The run and cluster create commands get them (--binaries auto, download or build); or point RECONCILE_CONFORMANCE_KUBE_BIN_DIR (or --bin-dir) at a directory that has them.`,
      );
    }
  }

  private kwokctl(args: string[], signal?: AbortSignal) {
    return this.deps.runner.run([join(this.config.binDir, "kwokctl"), ...args], {
      // The mark passes from kwokctl to every component it starts.
      env: { ...kwokctlEnv(this.config), [OWNER_RECORD_ENV]: this.recordPath },
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

/**
 * The machine-wide lock every kwok create takes while it picks ports and
 * starts components: in the kit's cache (next to the clusters, in kwokctl's
 * work directory), so every run of the kit on this machine shares it.
 */
export function kwokPortLockPath(config: KwokClusterConfig): string {
  return join(config.workDir, "ports.lock");
}

/** Free loopback ports outside the ephemeral range, one for each of KWOK_PORT_OPTIONS; call under the port lock. */
export async function pickKwokPorts(): Promise<KwokPorts> {
  const picked = await pickFreePorts(KWOK_PORT_OPTIONS.length, { host: KWOK_BIND_ADDRESS });
  const port = (option: KwokPortOption) => {
    const value = picked[KWOK_PORT_OPTIONS.indexOf(option)];
    if (value === undefined) throw new Error(`pickFreePorts returned ${picked.length} ports`);
    return value;
  };
  return {
    etcdPort: port("etcdPort"),
    etcdPeerPort: port("etcdPeerPort"),
    kubeApiserverPort: port("kubeApiserverPort"),
    kubeControllerManagerPort: port("kubeControllerManagerPort"),
    kubeSchedulerPort: port("kubeSchedulerPort"),
    kwokControllerPort: port("kwokControllerPort"),
  };
}
