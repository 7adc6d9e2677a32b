import { appendFile } from "node:fs/promises";
import { describeError, InfrastructureError } from "../errors.js";

/**
 * A log mirrored line by line to a newline-delimited JSON file (a scenario's
 * writes, reads, watch events: the artifacts a person reads after a run).
 * Appends are queued in order and never throw where they happen: a failing
 * file must not take a run down mid-scenario. The first error is kept and
 * reported by `flush`, where the scenario ends.
 */
export class NdjsonFile {
  private pending: Promise<void> = Promise.resolve();
  private error: unknown;
  /** Lines appended but not yet handed to the file, in order. */
  private unwritten: string[] = [];

  constructor(
    readonly path: string,
    /** What the file holds, for the error message: "the write log". */
    private readonly what: string,
  ) {}

  append(value: unknown): void {
    this.unwritten.push(`${JSON.stringify(value)}\n`);
    // One append already queued takes every line that came before it runs: a burst of lines
    // costs one open of the file, not one per line (a profile of a run found those opens).
    if (this.unwritten.length > 1) return;
    this.pending = this.pending
      .then(() => {
        const lines = this.unwritten.join("");
        this.unwritten = [];
        return appendFile(this.path, lines);
      })
      .catch((error: unknown) => {
        this.error ??= error;
      });
  }

  /** Waits until every line appended so far is in the file; rejects if any could not be written. */
  async flush(): Promise<void> {
    await this.pending;
    if (this.error !== undefined) {
      throw new InfrastructureError(
        "proxy/log-file",
        `cannot write ${this.what} to ${this.path}: ${describeError(this.error)}`,
      );
    }
  }
}
