import type { QueueReading } from "./metrics/queue-readings.js";
import type { KubeClient } from "../kube/kube-client.js";
import type { ApiProxy } from "../proxy/api-proxy.js";
import type { KillRecord } from "../proxy/faults.js";

/**
 * The operator of one scenario, however it runs: a local process group
 * (operator.command) or a Deployment in the cluster (operator.deploy).
 * Either way it reaches the API server only through the scenario's proxy,
 * and whoever launches it wires the proxy's crash-after fault to `crash()`.
 */
export interface OperatorUnderTest {
  /** Starts it; resolves once it listed or watched the custom resource through the proxy. */
  start(signal?: AbortSignal): Promise<void>;
  /** A new run after a crash or a stop; resolves once the new run listed or watched the custom resource. */
  restart(signal?: AbortSignal): Promise<void>;
  /**
   * Kills the current run at once, as a crash would; resolves once it is
   * gone, with what was killed. The proxy's crash-after handler.
   */
  crash(): Promise<KillRecord>;
  /** Stops it for good (the scenario is over). */
  stop(): Promise<void>;
  /** The last lines of the current (or last) run's log, for evidence. */
  logTail(lines?: number): Promise<string[]>;
  /**
   * How the current run ended when it ended on its own (not stopped or
   * killed by the kit): a panic, an exit. Undefined while it runs, or when
   * the kit ended it. Absent where the kit cannot tell (a Deployment).
   */
  exitedOnItsOwn?(): { readonly code: number | null; readonly signal: string | null } | undefined;
  /** The readings of its work queues' metrics, oldest first, when it publishes them (operator.metrics). */
  readonly queueReadings?: readonly QueueReading[];
}

/** What a launcher needs from the scenario to make its operator. */
export interface ScenarioSeat {
  readonly namespace: string;
  readonly proxy: ApiProxy;
  /** The scenario's artifacts directory: logs go here. */
  readonly workDir: string;
  /** The kit's own client (cleanup of Leases, the operator's Pod). */
  readonly kube: KubeClient;
}

/** Makes the operator of each scenario, as the contract says to run it. */
export interface OperatorLauncher {
  /** Where the scenario's proxy must listen for this operator to reach it (default 127.0.0.1). */
  readonly proxyListenAddress?: string;
  launch(seat: ScenarioSeat): OperatorUnderTest;
}
