/**
 * Typed errors with a stable `code`. The CLI maps each class to an exit code:
 * conformance violations and infrastructure failures must never look alike
 * to a CI gate (docs/design/architecture.md, "Reliability and security").
 */

/** Exit codes of the CLI and the action. */
export const ExitCode = {
  ok: 0,
  violations: 1,
  usage: 2,
  infrastructure: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Base class: every error the kit raises on purpose has a stable code. */
export abstract class KitError extends Error {
  abstract readonly exitCode: ExitCode;
  constructor(
    /** Stable machine-readable identifier, e.g. `config/invalid-field`. */
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The user asked for something malformed: bad flag, bad config value. */
export class UsageError extends KitError {
  readonly exitCode = ExitCode.usage;
}

/**
 * Something the kit depends on failed: a missing binary, a cluster that did
 * not come up, an operator that never started. `details` carries evidence
 * (component log tails) for the report.
 */
export class InfrastructureError extends KitError {
  readonly exitCode = ExitCode.infrastructure;
  constructor(
    code: string,
    message: string,
    readonly details: readonly string[] = [],
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/** The run was cancelled (Ctrl-C, SIGTERM or an AbortSignal). */
export class AbortedError extends KitError {
  readonly exitCode = ExitCode.infrastructure;
  constructor(message = "aborted") {
    super("aborted", message);
  }
}

/** Maps anything thrown to an exit code; unknown errors are infrastructure failures. */
export function exitCodeOf(error: unknown): ExitCode {
  return error instanceof KitError ? error.exitCode : ExitCode.infrastructure;
}

/** A one-line description of anything thrown, for logs. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // "fetch failed" and friends only make sense with their cause attached.
  const causes: string[] = [];
  for (let cause = error.cause; cause !== undefined && causes.length < 5;) {
    causes.push(cause instanceof Error ? cause.message : JSON.stringify(cause));
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return [error.message, ...causes].join(": ");
}

/** Throws AbortedError when the signal has fired; call between steps of long work. */
export function throwIfAborted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) throw new AbortedError(`${what}: aborted`);
}
