import { pollUntil, PollTimeoutError } from "../util/poll.js";
import { Inconclusive } from "./inconclusive.js";
import type { ScenarioQuiescence } from "./operator-silence.js";
import type { QuietBy, Silence } from "./quiescence.js";

// The one way a scenario waits for the operator after a stimulus: poll a fact until it holds and the
// operator is done (the quiescence rule, operator-silence.ts), within the contract's convergence
// timeout; at the deadline, say what was awaited and what was left.

/** What one observation of the awaited fact found. */
export type Sighting<T> =
  | { readonly state: "not-yet"; readonly reason: string }
  | {
      readonly state: "holds";
      readonly value: T;
      /** Why the wait goes on while the operator is not done yet. */
      readonly unquiet: string | ((silence: Silence) => string);
      /** A later stimulus the operator's silence counts from for this fact; default the wait's. */
      readonly since?: number;
    }
  | { readonly state: "done"; readonly value: T };

/** The fact does not hold yet, and why. */
export function notYet(reason: string): Sighting<never> {
  return { state: "not-yet", reason };
}

/** The fact holds: the wait ends with `value` once the operator is done; until then `unquiet` says why not. */
export function holds<T>(
  value: T,
  unquiet: string | ((silence: Silence) => string),
  since?: number,
): Sighting<T> {
  return { state: "holds", value, unquiet, ...(since === undefined ? {} : { since }) };
}

/** The wait ends with `value`, whether the operator is done or not (a fault acted, it gave up). */
export function doneRegardless<T>(value: T): Sighting<T> {
  return { state: "done", value };
}

/** A wait that reached its deadline: what it awaited, for how long, and what was left. */
export interface Deadline {
  readonly awaited: string;
  readonly timeoutMs: number;
  readonly lastReason: string;
}

/** How a wait ended: its value, and what decided (the quiescence evidence, the observation alone, the deadline). */
export interface Waited<T> {
  readonly value: T;
  readonly by: QuietBy | "observation" | "deadline";
}

/** What a quiet wait needs of its scenario (a Scenario has it all). */
export interface QuietWaitScenario {
  readonly quiescence: Pick<ScenarioQuiescence, "silence" | "quietBy">;
  readonly contract: { readonly timeouts: { readonly convergeMs: number } };
  operatorLogNotes(): Promise<string[]>;
}

export interface QuietWait<T> {
  /** What is awaited: in the abort message and the deadline's ("the deletion of the custom resource"). */
  readonly awaited: string;
  /** The stimulus (a reading of the run's clock): the operator's silence counts from it. */
  readonly stimulusAt: number;
  /**
   * One observation of the fact. `silence` reads the operator's silence
   * since the stimulus, once per observation (hasGivenUp decides from it).
   * A KitError it throws ends the wait at once; any other error is a reason
   * to go on (pollUntil).
   */
  readonly observe: (silence: () => Silence) => Promise<Sighting<T>> | Sighting<T>;
  readonly signal: AbortSignal;
  /** Default the contract's convergence timeout. */
  readonly timeoutMs?: number;
  /** Pause between observations; default 100 ms. */
  readonly intervalMs?: number;
  /**
   * What the deadline means: a value to end with, or a throw. Default:
   * Inconclusive "no <awaited> within <n> s: <last reason>", with the
   * operator's log. A deadline is never a failure by itself: the operator
   * may just be slow.
   */
  readonly atDeadline?: (deadline: Deadline) => Promise<T> | T;
}

/**
 * Polls `observe` until the fact holds and the operator is done by the
 * quiescence rule (each decision kept in the scenario's quiescence note),
 * or the observation ends the wait on its own. At the deadline, `atDeadline`.
 */
export async function untilQuiet<T>(scenario: QuietWaitScenario, wait: QuietWait<T>): Promise<Waited<T>> {
  const { quiescence } = scenario;
  const timeoutMs = wait.timeoutMs ?? scenario.contract.timeouts.convergeMs;
  try {
    return await pollUntil<Waited<T>>(
      async () => {
        let read: Silence | undefined;
        const silence = () => (read ??= quiescence.silence(wait.stimulusAt));
        const sighting = await wait.observe(silence);
        if (sighting.state === "not-yet") return { done: false, reason: sighting.reason };
        if (sighting.state === "done")
          return { done: true, value: { value: sighting.value, by: "observation" } };
        const now = sighting.since === undefined ? silence() : quiescence.silence(sighting.since);
        const by = quiescence.quietBy(now);
        if (by !== undefined) return { done: true, value: { value: sighting.value, by } };
        const { unquiet } = sighting;
        return { done: false, reason: typeof unquiet === "string" ? unquiet : unquiet(now) };
      },
      { description: wait.awaited, timeoutMs, intervalMs: wait.intervalMs ?? 100, signal: wait.signal },
    );
  } catch (error) {
    if (!(error instanceof PollTimeoutError)) throw error;
    const deadline = { awaited: wait.awaited, timeoutMs: error.timeoutMs, lastReason: error.lastReason };
    if (wait.atDeadline) return { value: await wait.atDeadline(deadline), by: "deadline" };
    throw new Inconclusive(
      `no ${deadline.awaited} within ${deadline.timeoutMs / 1000} s: ${deadline.lastReason}`,
      await scenario.operatorLogNotes(),
    );
  }
}
