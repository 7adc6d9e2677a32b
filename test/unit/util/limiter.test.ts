import { describe, expect, it } from "vitest";
import { Limiter } from "../../../src/util/limiter.js";

/** A task that resolves when told to, recording when it ran. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("Limiter", () => {
  it("never runs more than its capacity at once, and starts waiting tasks in order", async () => {
    const limiter = new Limiter(2);
    const gates = [gate(), gate(), gate(), gate()];
    const started: number[] = [];
    let peak = 0;
    let running = 0;
    const all = limiter.map([0, 1, 2, 3], async (i) => {
      started.push(i);
      peak = Math.max(peak, ++running);
      await gates[i]?.opened;
      running--;
      return i * 10;
    });
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    gates[1]?.open();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(started).toEqual([0, 1, 2]);
    for (const g of gates) g.open();
    // Results come back in the items' order, not the order they finished.
    expect(await all).toEqual([0, 10, 20, 30]);
    expect(peak).toBe(2);
  });

  it("rejects with a task's error once every started task has settled", async () => {
    const limiter = new Limiter(3);
    const finished: number[] = [];
    await expect(
      limiter.map([0, 1, 2], async (i) => {
        if (i === 0) throw new Error("task 0 failed");
        await new Promise((resolve) => setTimeout(resolve, 5));
        finished.push(i);
      }),
    ).rejects.toThrow("task 0 failed");
    expect(finished.sort()).toEqual([1, 2]);
  });

  it("refuses a capacity that is not a whole number >= 1", () => {
    expect(() => new Limiter(0)).toThrow(RangeError);
    expect(() => new Limiter(1.5)).toThrow(RangeError);
  });
});
