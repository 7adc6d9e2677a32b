import type { WriteEntry } from "../proxy/write-log.js";

/** A scenario that could not reach the point where its check judges: never a pass. */
export class Inconclusive extends Error {
  constructor(
    message: string,
    readonly notes: readonly string[] = [],
  ) {
    super(message);
    this.name = "Inconclusive";
  }
}

/**
 * The operator never fell quiet: it was still writing at the convergence
 * deadline. Its writes (since the custom resource was ready, or since the
 * wait began when it never was) are the evidence: a check about writes can
 * judge them (a correct operator reaches a fixed point; one that keeps
 * changing stored state with no new input makes avoidable writes), the
 * others stay inconclusive.
 */
export class NeverQuiet extends Inconclusive {
  constructor(
    message: string,
    notes: readonly string[],
    readonly writes: readonly WriteEntry[],
    /** Whether the custom resource was ready while they were made. */
    readonly ready: boolean,
  ) {
    super(message, notes);
    this.name = "NeverQuiet";
  }
}
