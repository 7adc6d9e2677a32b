import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { WorkQueue } from "../../../examples/webapp-operator-ts/src/workqueue.js";

// The work queue of the TypeScript example operator (examples/webapp-operator-ts):
// client-go's semantics, which the operator's correctness leans on (one
// reconcile per key at a time, nothing lost that arrives during one, backoff
// on failures).

/** Whether the promise has settled by now (after pending microtasks). */
async function settled<T>(promise: Promise<T>): Promise<{ done: boolean; value?: T }> {
  let state: { done: boolean; value?: T } = { done: false };
  void promise.then((value) => {
    state = { done: true, value };
  });
  await Promise.resolve();
  await Promise.resolve();
  return state;
}

describe("WorkQueue", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("hands out keys in order, each once however often it was added", async () => {
    const queue = new WorkQueue();
    for (const key of ["ns/a", "ns/b", "ns/a", "ns/c", "ns/b"]) queue.add(key);
    expect(queue.length).toBe(3);
    expect([await queue.get(), await queue.get(), await queue.get()]).toEqual(["ns/a", "ns/b", "ns/c"]);
    expect(queue.length).toBe(0);
  });

  it("never hands out a key being processed; added meanwhile, it comes back once after done", async () => {
    const queue = new WorkQueue();
    queue.add("ns/a");
    const key = await queue.get();
    queue.add("ns/a");
    queue.add("ns/a");
    expect(queue.length).toBe(0);
    const next = queue.get();
    expect((await settled(next)).done).toBe(false);
    queue.done(key ?? "");
    expect(await settled(next)).toEqual({ done: true, value: "ns/a" });
    queue.done("ns/a");
    expect(queue.length).toBe(0);
  });

  it("a waiting get takes the next key added", async () => {
    const queue = new WorkQueue();
    const next = queue.get();
    expect((await settled(next)).done).toBe(false);
    queue.add("ns/a");
    expect(await next).toBe("ns/a");
    expect(queue.length).toBe(0);
  });

  it("requeues a failed key after a backoff that doubles up to the maximum, and forget resets it", async () => {
    const queue = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 350 });
    const fail = async (expectedDelay: number) => {
      const key = await queue.get();
      queue.addRateLimited(key ?? "");
      queue.done(key ?? "");
      vi.advanceTimersByTime(expectedDelay - 1);
      expect(queue.length).toBe(0);
      vi.advanceTimersByTime(1);
      expect(queue.length).toBe(1);
    };
    queue.add("ns/a");
    await fail(100);
    await fail(200);
    await fail(350);
    await fail(350);
    expect(queue.numRequeues("ns/a")).toBe(4);
    queue.forget("ns/a");
    expect(queue.numRequeues("ns/a")).toBe(0);
    await fail(100);
  });

  it("addAfter keeps the earliest of several delays, and a key added now is not added twice", () => {
    const queue = new WorkQueue();
    queue.addAfter("ns/a", 500);
    queue.addAfter("ns/a", 200);
    queue.addAfter("ns/a", 900);
    vi.advanceTimersByTime(200);
    expect(queue.length).toBe(1);
    queue.add("ns/a");
    vi.advanceTimersByTime(1000);
    expect(queue.length).toBe(1);
  });

  it("after shutDown hands out nothing: waiting and later gets resolve to undefined, delays are dropped", async () => {
    const queue = new WorkQueue();
    const waiting = queue.get();
    queue.addAfter("ns/a", 100);
    queue.shutDown();
    expect(await waiting).toBeUndefined();

    const busy = new WorkQueue();
    busy.add("ns/queued");
    busy.shutDown();
    expect(await busy.get()).toBeUndefined();
    queue.add("ns/b");
    vi.advanceTimersByTime(1000);
    expect(queue.length).toBe(0);
    expect(await queue.get()).toBeUndefined();
    expect(queue.shuttingDown).toBe(true);
  });
});
