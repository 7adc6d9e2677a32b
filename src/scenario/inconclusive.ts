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

/**
 * The operator's process ended on its own while the kit waited for it: a
 * panic, a fatal log, an exit on a spec it cannot handle. A failure of the
 * operator, whatever the check (Acto's crash oracle): an operator must
 * report what it cannot do, not die of it. `log` is the end of its log.
 */
export class OperatorExited extends Error {
  constructor(
    message: string,
    readonly log: readonly string[],
  ) {
    super(message);
    this.name = "OperatorExited";
  }
}

/** The line of an operator's log that says why it died (a panic, a fatal error), else its last line. */
export function dyingWords(log: readonly string[]): string | undefined {
  return (
    log.find((line) =>
      /^panic: |^fatal error: |"level":"(panic|dpanic|fatal)"|\bFATAL\b|^F\d{4} /.test(line),
    ) ?? log.at(-1)
  );
}
