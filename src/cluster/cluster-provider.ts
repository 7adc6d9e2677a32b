import type { ProviderName } from "./cluster-config.js";

/** How to reach a running cluster. */
export interface ClusterAccess {
  readonly provider: ProviderName;
  /** Cluster name (for `existing`, the kubeconfig context). */
  readonly name: string;
  /** A kubeconfig file that reaches the cluster with admin rights. */
  readonly kubeconfigPath: string;
  /** The context in that file to use. */
  readonly context: string;
  /** The API server URL of that context. */
  readonly apiServerUrl: string;
}

/** What a delete found: a cluster it removed, or none by that name (nothing done). */
export type DeleteOutcome = "deleted" | "absent";

export interface CreateOptions {
  /** Aborting stops the creation and removes whatever was started. */
  readonly signal?: AbortSignal;
}

/**
 * One way to get a cluster. `create` returns once the cluster accepts
 * workloads (API ready, a schedulable node, the default ServiceAccount);
 * `delete` removes only what this provider created.
 */
export interface ClusterProvider {
  readonly provider: ProviderName;
  create(options?: CreateOptions): Promise<ClusterAccess>;
  /**
   * Removes the cluster; a no-op for clusters the kit did not create. Safe to
   * call twice: "absent" when there was nothing to remove.
   */
  delete(): Promise<DeleteOutcome>;
  /** Copies component logs into `directory`; returns the files written. */
  collectLogs(directory: string): Promise<string[]>;
  /** Pids of local processes that make up the cluster (empty where none are local). */
  processIds(): Promise<number[]>;
}
