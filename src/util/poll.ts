import { setTimeout as delay } from "node:timers/promises";
import { AbortedError, describeError, KitError } from "../errors.js";

/** Result of one observation: done with a value, or not yet with the reason why. */
export type PollResult<T> = { done: true; value: T } | { done: false; reason: string };

export interface PollOptions {
  /** What is being waited for, used in the timeout message. */
  readonly description: string;
  /** Give up after this many milliseconds. */
  readonly timeoutMs: number;
  /** Pause between observations; default 100 ms. */
  readonly intervalMs?: number;
  readonly signal?: AbortSignal;
}

const OVERDUE = "the check did not answer before the deadline";

/** Raised when a poll reaches its deadline; carries the last reason observed. */
export class PollTimeoutError extends Error {
  readonly code = "poll/timeout";
  constructor(
    readonly description: string,
    readonly lastReason: string,
    readonly timeoutMs: number,
  ) {
    super(`timed out after ${timeoutMs} ms waiting for ${description}: ${lastReason}`);
    this.name = "PollTimeoutError";
  }
}

/**
 * Observes until `check` reports done or the deadline passes. This is the
 * only way the kit waits for the cluster: a deadline-bounded poll on an
 * observable fact, never a fixed sleep. Errors thrown by `check` count as
 * "not yet" (the API may be starting) and become the reason, except a
 * KitError, which is a verdict and ends the wait at once.
 */
export async function pollUntil<T>(
  check: () => Promise<PollResult<T>> | PollResult<T>,
  options: PollOptions,
): Promise<T> {
  const interval = options.intervalMs ?? 100;
  const deadline = Date.now() + options.timeoutMs;
  let lastReason: string | undefined;
  for (;;) {
    if (options.signal?.aborted) throw new AbortedError(`waiting for ${options.description}: aborted`);
    // A timer may fire a millisecond before Date.now() reads the deadline: an overdue check ends the wait.
    let overdue = false;
    try {
      // A check that hangs (a stalled API server) must not outlive the deadline or an abort.
      const result = await boundedCheck(check, deadline, options);
      if (result.done) return result.value;
      overdue = result.reason === OVERDUE;
      // An overdue check says nothing new about the fact: keep what the last answer said.
      lastReason =
        result.reason === OVERDUE && lastReason !== undefined
          ? `${lastReason} (then a check was still running at the deadline)`
          : result.reason;
    } catch (error) {
      if (error instanceof KitError) throw error; // a deliberate verdict, not a passing failure
      lastReason = describeError(error);
    }
    if (overdue || Date.now() >= deadline)
      throw new PollTimeoutError(options.description, lastReason ?? OVERDUE, options.timeoutMs);
    try {
      await delay(interval, undefined, { signal: options.signal });
    } catch {
      throw new AbortedError(`waiting for ${options.description}: aborted`);
    }
  }
}

async function boundedCheck<T>(
  check: () => Promise<PollResult<T>> | PollResult<T>,
  deadline: number,
  options: PollOptions,
): Promise<PollResult<T>> {
  const timer = new AbortController();
  const stop = () => timer.abort();
  options.signal?.addEventListener("abort", stop, { once: true });
  let finished = false;
  const overdue = delay(Math.max(0, deadline - Date.now()), undefined, { signal: timer.signal }).then(
    (): PollResult<T> => ({ done: false, reason: OVERDUE }),
    (): PollResult<T> => {
      if (finished) return { done: false, reason: "cancelled" }; // the check won the race
      throw new AbortedError(`waiting for ${options.description}: aborted`);
    },
  );
  const checking = Promise.resolve().then(check);
  checking.catch(() => undefined); // a check that fails after losing the race is of no interest
  try {
    return await Promise.race([checking, overdue]);
  } finally {
    finished = true;
    timer.abort();
    options.signal?.removeEventListener("abort", stop);
  }
}
