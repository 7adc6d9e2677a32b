import { open, type FileHandle } from "node:fs/promises";
import { describeError, InfrastructureError } from "../errors.js";

/**
 * A log mirrored line by line to a newline-delimited JSON file (a scenario's
 * writes, reads, watch events: the artifacts a person reads after a run).
 * Appends are queued in order and never throw where they happen: a failing
 * file must not take a run down mid-scenario. The first error is kept and
 * reported by `flush`, where the scenario ends. The file stays open between
 * appends and is closed by `flush` (an append after it opens it again): an
 * open and a close per burst of lines were a visible part of the kit's CPU
 * in a profile of a full run.
 */
export class NdjsonFile {
  private pending: Promise<void> = Promise.resolve();
  private error: unknown;
  /** Lines appended but not yet handed to the file, in order. */
  private unwritten: string[] = [];
  private handle: FileHandle | undefined;

  constructor(
    readonly path: string,
    /** What the file holds, for the error message: "the write log". */
    private readonly what: string,
  ) {}

  append(value: unknown): void {
    this.unwritten.push(`${JSON.stringify(value)}\n`);
    // One append already queued takes every line that came before it runs: a burst of lines
    // costs one write, not one per line.
    if (this.unwritten.length > 1) return;
    this.queue(async () => {
      const lines = this.unwritten.join("");
      this.unwritten = [];
      this.handle ??= await open(this.path, "a");
      await this.handle.appendFile(lines);
      // After a flush (the scenario's end) nobody flushes again: a late line (a request answered
      // while the proxy closed) is written and its file closed at once, never left to the GC.
      if (this.flushed) await this.closeHandle();
    });
  }

  /** Whether `flush` has run once: the owner is done with the file. */
  private flushed = false;

  private async closeHandle(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }

  /** Runs `step` after every step queued before it; its error is kept for `flush`. */
  private queue(step: () => Promise<void>): void {
    this.pending = this.pending.then(step).catch((error: unknown) => {
      this.error ??= error;
    });
  }

  /** Waits until every line appended so far is in the file; rejects if any could not be written. */
  async flush(): Promise<void> {
    this.flushed = true;
    this.queue(() => this.closeHandle());
    await this.pending;
    if (this.error !== undefined) {
      throw new InfrastructureError(
        "proxy/log-file",
        `cannot write ${this.what} to ${this.path}: ${describeError(this.error)}`,
      );
    }
  }
}
