import { describe, expect, it } from "vitest";
import { AbortedError, InfrastructureError } from "../../../src/errors.js";
import { pollUntil, PollTimeoutError } from "../../../src/util/poll.js";

describe("pollUntil", () => {
  it("returns the value once the check is done", async () => {
    let calls = 0;
    const value = await pollUntil(
      () => (++calls === 3 ? { done: true, value: "ready" } : { done: false, reason: `call ${calls}` }),
      { description: "x", timeoutMs: 5_000, intervalMs: 1 },
    );
    expect(value).toBe("ready");
    expect(calls).toBe(3);
  });

  it("reports the last reason on timeout, including errors the check threw, with their cause", async () => {
    const error = await pollUntil(
      () => {
        throw new Error("connection refused", { cause: new Error("ECONNREFUSED") });
      },
      { description: "the API server", timeoutMs: 30, intervalMs: 1 },
    ).catch((e: unknown) => e);
    if (!(error instanceof PollTimeoutError))
      throw new Error(`expected PollTimeoutError, got ${String(error)}`);
    expect(error.message).toContain("waiting for the API server");
    expect(error.lastReason).toBe("connection refused: ECONNREFUSED");
  });

  it("does not wait past the deadline for a check that never answers", async () => {
    const error = await pollUntil(() => new Promise<never>(() => {}), {
      description: "a stalled server",
      timeoutMs: 50,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PollTimeoutError);
  });

  it("keeps the last real answer when the check still running at the deadline never answers", async () => {
    let calls = 0;
    const error = await pollUntil(
      () => (++calls === 1 ? { done: false, reason: "Ready=False" } : new Promise<never>(() => {})),
      { description: "convergence", timeoutMs: 50, intervalMs: 1 },
    ).catch((e: unknown) => e);
    if (!(error instanceof PollTimeoutError))
      throw new Error(`expected PollTimeoutError, got ${String(error)}`);
    expect(error.lastReason).toBe("Ready=False (then a check was still running at the deadline)");
  });

  it("ends at once when the check throws a KitError (a verdict, not a passing failure)", async () => {
    let calls = 0;
    const verdict = new InfrastructureError("operator/exited", "operator exited");
    const polling = pollUntil(
      () => {
        calls++;
        throw verdict;
      },
      { description: "x", timeoutMs: 60_000, intervalMs: 1 },
    );
    await expect(polling).rejects.toBe(verdict);
    expect(calls).toBe(1);
  });

  it("stops with AbortedError when the signal fires", async () => {
    const controller = new AbortController();
    const polling = pollUntil(() => ({ done: false, reason: "never" }), {
      description: "forever",
      timeoutMs: 60_000,
      intervalMs: 10_000,
      signal: controller.signal,
    });
    controller.abort();
    await expect(polling).rejects.toBeInstanceOf(AbortedError);
  });
});
