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
  if (!(error instanceof Error)) return withoutSecretValues(String(error));
  // "fetch failed" and friends only make sense with their cause attached.
  const causes: string[] = [];
  for (let cause = error.cause; cause !== undefined && causes.length < 5;) {
    causes.push(cause instanceof Error ? cause.message : JSON.stringify(cause));
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return withoutSecretValues([error.message, ...causes].join(": "));
}

/**
 * A message with the values of any Secret it quotes left out: the API
 * server's answer to a refused Secret write echoes the object it was sent
 * (`Invalid value: "{\\"data\\":{\\"password\\":…}}"`), and Secret data never
 * reaches a report. The `data` and `stringData` maps read `{…}`, however
 * deeply the JSON is escaped and whatever their values hold; only in a
 * message that mentions a Secret. A map whose end cannot be found (a Go
 * print of one, whose values are not quoted) takes the rest of the
 * message with it.
 */
export function withoutSecretValues(message: string): string {
  // "/secrets/", `secrets "s"`, `Secret "s" is invalid`, "kind":"Secret", &Secret{...}: any mention.
  if (!/\bsecrets?\b/i.test(message)) return message;
  const key =
    /(\\*)"(?:data|stringData)\\*"\s*:\s*(?=\{)|\b(?:[Dd]ata|[Ss]tring[Dd]ata):(?:map\[[^\]]*\][^\s{,]*(?=\{)|(?=map\[))/g;
  let out = "";
  let from = 0;
  for (let match = key.exec(message); match; match = key.exec(message)) {
    const start = match.index + match[0].length;
    if (start < from) continue;
    if (match[1] === undefined) {
      // Go prints map values unquoted: where one ends cannot be told, so the rest goes.
      return `${out}${message.slice(from, start)}… (the rest of the message holds Secret values: left out)`;
    }
    const end = endOfJsonMap(message, start, match[1].length);
    out += `${message.slice(from, start)}{…}`;
    from = end;
    key.lastIndex = end;
  }
  return out + message.slice(from);
}

/**
 * Where a JSON map that opens at `start` ends; the message's end when it
 * does not. Its strings are delimited by quotes preceded by `delimiter`
 * backslashes (0 in plain JSON, 1 escaped once, 3 twice, 2^n - 1): a quote
 * preceded by that many plus a multiple of 2 * (delimiter + 1) (escaped
 * backslashes at the end of a value) is one too; any other is inside a value.
 */
function endOfJsonMap(text: string, start: number, delimiter: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      let backslashes = 0;
      while (text[i - 1 - backslashes] === "\\") backslashes++;
      if (backslashes % (2 * (delimiter + 1)) === delimiter) inString = !inString;
      continue;
    }
    if (inString) continue;
    if (char === "{") depth++;
    else if (char === "}" && --depth === 0) return i + 1;
  }
  return text.length;
}

/** Throws AbortedError when the signal has fired; call between steps of long work. */
export function throwIfAborted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) throw new AbortedError(`${what}: aborted`);
}
