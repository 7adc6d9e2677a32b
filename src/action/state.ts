/** What the main step leaves for the post step (core.saveState / core.getState). */
export const STATE = {
  /** The main step's pid: what it owned is a leftover once it is gone. */
  ownerPid: "owner-pid",
} as const;
