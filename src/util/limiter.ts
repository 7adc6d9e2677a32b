/**
 * Runs tasks with at most `capacity` at a time, in the order given, and
 * returns their results in that order (not the order they finished), so a
 * report built from them does not depend on timing. A task that throws
 * makes `map` reject once every started task has settled.
 */
export class Limiter {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity ${capacity}: expected a whole number >= 1`);
    }
  }

  /** Runs `task` when a slot is free. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.capacity) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  /** `run` for each item; results in the items' order. */
  async map<T, R>(items: readonly T[], task: (item: T, index: number) => Promise<R>): Promise<R[]> {
    const settled = await Promise.allSettled(items.map((item, index) => this.run(() => task(item, index))));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failed) throw failed.reason;
    return settled.map((s) => (s as PromiseFulfilledResult<R>).value);
  }
}
