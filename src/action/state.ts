/** What the main step leaves for the post step (core.saveState / core.getState). */
export const STATE = {
  /** The main step's pid: what it owned is a leftover once it is gone. */
  ownerPid: "owner-pid",
  /** The cluster keep-cluster kept ("kind cluster rc-run-1a2b3c"), and how to delete it: the post step names it. */
  keptCluster: "kept-cluster",
  keptClusterDelete: "kept-cluster-delete",
} as const;
