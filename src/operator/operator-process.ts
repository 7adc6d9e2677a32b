import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  currentOwner,
  describeProcess,
  newOperatorRecordId,
  operatorRecordDir,
  OWNER_RECORD_ENV,
  removeRecord,
  writeRecord,
  type OperatorRecord,
} from "../cleanup/ownership.js";
import { processEnvironment } from "../cluster/cluster-config.js";
import { AbortedError, describeError, InfrastructureError } from "../errors.js";
import type { KubeClient } from "../kube/kube-client.js";
import { trackProcessGroup, untrackProcessGroup } from "../process/child-registry.js";
import { tailLines } from "../process/command-runner.js";
import { describeStartFailure, startFailureCause } from "./start-failure.js";
import { processGroupMembers, signalProcess, waitForExit } from "../process/process-table.js";
import type { ApiProxy } from "../proxy/api-proxy.js";
import { removeProxyToken } from "../proxy/operator-kubeconfig.js";
import type { KillRecord } from "../proxy/faults.js";
import { silentLogger, type Logger } from "../util/logger.js";
import { pollUntil } from "../util/poll.js";
import { releaseOperatorLeases } from "./leases.js";
import { operatorEnvironment } from "./operator-environment.js";
import type { OperatorUnderTest } from "./operator-under-test.js";

/** How to run the operator under test, out of cluster. */
export interface OperatorCommand {
  readonly argv: readonly [string, ...string[]];
  /**
   * Added to the user's environment (less the kit's CI credentials: see
   * operator-environment.ts); KUBECONFIG is always set to the proxy's.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** Withheld credentials the contract passes through on purpose, e.g. GITHUB_TOKEN. */
  readonly passThroughEnv?: readonly string[];
  readonly cwd?: string;
}

export interface OperatorProcessOptions {
  readonly command: OperatorCommand;
  /** The proxy the operator must talk through; its kubeconfig is written here. */
  readonly proxy: ApiProxy;
  /** The custom resource whose list or watch means "the operator has started". */
  readonly customResource: { readonly group: string; readonly resource: string };
  /** Per-run log files and the proxy kubeconfig go here. */
  readonly workDir: string;
  /** The kit's own client, to remove a crashed operator's leader-election Lease. */
  readonly kube: KubeClient;
  readonly startTimeoutMs?: number;
  readonly stopGraceMs?: number;
  readonly logger?: Logger;
  /**
   * Where each run's ownership record goes (src/cleanup/ownership.ts), so
   * a kit killed with SIGKILL leaves a trace of the operator for `clean`.
   * Default: the operators/ directory of the kit's cache, as this process's
   * environment names it.
   */
  readonly recordDir?: string;
}

/**
 * The operator as a local process: its own process group (so a crash kills
 * everything it spawned, `go run` included), KUBECONFIG pointing at the
 * proxy, output to one log file per run. Whoever launches it wires the
 * proxy's crash-after fault to `crash()`.
 */
export class OperatorProcess implements OperatorUnderTest {
  private child: ChildProcess | undefined;
  /** Set before the kit ends a run (stop, kill, crash): that exit is the kit's, not the operator's. */
  private endingRun = false;
  /** How the current run ended, when it ended on its own. */
  private ownExit: { readonly code: number | null; readonly signal: string | null } | undefined;
  private exited: Promise<void> = Promise.resolve();
  private runs = 0;
  private kubeconfigPath: string | undefined;
  /** The ownership record of the current run's process group, until the group is stopped. */
  private recordPath: string | undefined;
  readonly logFiles: string[] = [];

  constructor(private readonly options: OperatorProcessOptions) {}

  /** The process group id (= pid of the command) of the current run. */
  get pgid(): number | undefined {
    return this.child?.pid;
  }

  /** Live processes of the current run's group. */
  processIds(): number[] {
    return this.pgid === undefined ? [] : processGroupMembers(this.pgid);
  }

  get running(): boolean {
    return this.processIds().length > 0;
  }

  /** Starts a run and resolves once the operator listed or watched the custom resource. */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.running) throw new Error("operator already running");
    // A previous run that ended by itself (not stopped) still has its record.
    await this.forgetRun();
    const { command, proxy, workDir } = this.options;
    await mkdir(workDir, { recursive: true });
    // Written at every start: a stop takes the token out of it (below).
    this.kubeconfigPath = await proxy.writeKubeconfig(join(workDir, "operator.kubeconfig"));
    this.runs++;
    proxy.beginOperatorRun(this.runs);
    const requestsBefore = proxy.operatorRequestCount;
    const logFile = join(workDir, `operator-${this.runs}.log`);
    this.logFiles.push(logFile);
    // Before the spawn: a kit killed from here on leaves the record behind, naming a dead owner.
    const recordId = newOperatorRecordId();
    const recordPath = join(
      this.options.recordDir ?? operatorRecordDir(processEnvironment()),
      `${recordId}.json`,
    );
    const record: OperatorRecord = {
      version: 1,
      kind: "operator",
      name: recordId,
      owner: currentOwner(),
      createdAt: new Date().toISOString(),
      argv: [...command.argv],
      ...(command.cwd === undefined ? {} : { cwd: command.cwd }),
      logFile,
    };
    await writeRecord(recordPath, record);
    this.recordPath = recordPath;
    const fd = openSync(logFile, "a");
    const readsBefore = proxy.readCount;
    let spawnError: Error | undefined;
    try {
      const [file, ...args] = command.argv;
      this.child = spawn(file, args, {
        cwd: command.cwd,
        env: {
          ...operatorEnvironment({
            parent: process.env,
            extra: command.env,
            passThrough: command.passThroughEnv,
            kubeconfigPath: this.kubeconfigPath,
          }),
          // Inherited by everything the operator spawns: `clean` finds them all by it.
          [OWNER_RECORD_ENV]: recordPath,
        },
        detached: true, // its own process group
        stdio: ["ignore", fd, fd],
      });
    } finally {
      closeSync(fd);
    }
    const child = this.child;
    child.on("error", (error) => (spawnError = error));
    this.endingRun = false;
    this.ownExit = undefined;
    const run = this.runs;
    this.exited = new Promise((resolve) =>
      child.once("exit", (code, signal) => {
        // Only the current run's own end counts: a run the kit stopped may report its exit after
        // the next run started (a restart), and that exit was the kit's doing.
        if (run === this.runs && !this.endingRun) this.ownExit = { code, signal };
        resolve();
      }),
    );
    if (child.pid === undefined) {
      // Nothing was started (the error event says why, below).
      await this.forgetRun();
    } else {
      trackProcessGroup(child.pid, recordPath);
      await writeRecord(recordPath, { ...record, group: describeProcess(child.pid) });
    }
    this.options.logger?.info(`operator: started run ${this.runs} (pid ${child.pid ?? "?"}), log ${logFile}`);

    const resource = this.options.customResource;
    try {
      await pollUntil(
        async () => {
          if (spawnError)
            throw new InfrastructureError(
              "operator/spawn-failed",
              `cannot run ${command.argv[0]}: ${spawnError.message}`,
            );
          if (child.exitCode !== null || child.signalCode !== null) {
            const tail = await this.logTail();
            throw new InfrastructureError(
              "operator/exited",
              `operator exited (${child.exitCode ?? child.signalCode}) before it watched ${resource.resource}${describeStartFailure(startFailureCause(tail))}`,
              tail,
            );
          }
          return proxy.sawRead({ group: resource.group, resource: resource.resource }, readsBefore)
            ? { done: true, value: undefined }
            : { done: false, reason: `no list or watch of ${resource.resource} yet` };
        },
        {
          description: "the operator to start",
          timeoutMs: this.options.startTimeoutMs ?? 60_000,
          intervalMs: 50,
          signal,
        },
      );
    } catch (error) {
      await this.kill();
      if (error instanceof InfrastructureError || error instanceof AbortedError) throw error;
      if (proxy.operatorRequestCount === requestsBefore) {
        const refused =
          proxy.refusedRequestCount > 0
            ? ` (${proxy.refusedRequestCount} request(s) without the run's token were refused)`
            : "";
        throw new InfrastructureError(
          "operator/no-proxy-contact",
          `operator did not start: no request reached the proxy${refused}: does the operator honour KUBECONFIG?`,
          await this.logTail(),
        );
      }
      throw new InfrastructureError(
        "operator/start-timeout",
        `operator did not start: it talked to the API server but never listed or watched ${resource.resource}.${resource.group}: ${describeError(error)}`,
        await this.logTail(),
      );
    }
  }

  /**
   * SIGKILL to the whole group, as a crash would. Once it is gone, any Lease
   * it held is deleted so a restart does not wait for the lease to expire.
   */
  async crash(): Promise<KillRecord> {
    const pids = this.processIds();
    await this.kill();
    await releaseOperatorLeases(this.options.proxy, this.options.kube, this.options.logger ?? silentLogger);
    return { signal: "SIGKILL", pids };
  }

  /** A new run after a crash or stop. */
  async restart(signal?: AbortSignal): Promise<void> {
    if (this.running) await this.stop();
    await this.start(signal);
  }

  /** SIGTERM, then SIGKILL after the grace period; resolves when the group is gone. */
  async stop(): Promise<void> {
    const pgid = this.pgid;
    if (pgid === undefined) return;
    if (this.running) {
      this.endingRun = true;
      signalProcess(-pgid, "SIGTERM");
      const left = await waitForExit(() => this.processIds(), {
        description: "the operator to stop",
        timeoutMs: this.options.stopGraceMs ?? 10_000,
      });
      if (left.length > 0) await this.kill();
    }
    await this.forgetRun();
    // The scenario's directory is the report's artifact: it keeps where the operator was pointed,
    // not the credential (masked in the job log, of no use once the proxy is gone anyway).
    if (this.kubeconfigPath !== undefined) await removeProxyToken(this.kubeconfigPath);
  }

  /** The last lines of the current run's log. */
  async logTail(lines = 20): Promise<string[]> {
    const file = this.logFiles.at(-1);
    if (!file) return [];
    return tailLines(await readFile(file, "utf8").catch(() => ""), lines);
  }

  /** How the current run ended when it ended on its own (OperatorUnderTest.exitedOnItsOwn). */
  exitedOnItsOwn(): { readonly code: number | null; readonly signal: string | null } | undefined {
    return this.ownExit;
  }

  private async kill(): Promise<void> {
    const pgid = this.pgid;
    if (pgid === undefined) return;
    this.endingRun = true;
    signalProcess(-pgid, "SIGKILL");
    await this.exited;
    const left = await waitForExit(() => this.processIds(), {
      description: "the operator's processes to die",
      timeoutMs: 5_000,
    });
    if (left.length > 0) {
      // The record stays: `clean` can try again once whatever holds them lets go.
      throw new InfrastructureError(
        "operator/unkillable",
        `operator processes survived SIGKILL: ${left.join(", ")}`,
      );
    }
    await this.forgetRun();
  }

  /** Once the current run's group is gone: stops tracking it and removes its ownership record. */
  private async forgetRun(): Promise<void> {
    const pgid = this.pgid;
    if (pgid !== undefined) untrackProcessGroup(pgid);
    const recordPath = this.recordPath;
    this.recordPath = undefined;
    if (recordPath !== undefined) await removeRecord(recordPath);
  }
}
