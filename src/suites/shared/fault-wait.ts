import { evaluateReadiness } from "../../contract/readiness.js";
import type { FaultOutcome } from "../../proxy/faults.js";
import { Inconclusive, type Scenario } from "../../scenario/scenario.js";
import { pollUntil, PollTimeoutError } from "../../util/poll.js";
import type { ObserveContext } from "../check.js";

type WaitContext = Pick<ObserveContext, "deps">;

/**
 * Waits until an armed fault has acted, or the operator converged without
 * making the write it waits for (then the outcome stays `not-reached`).
 * `what` names the fault in messages ("the crash", "the concurrent write").
 * Inconclusive when neither happened before the convergence deadline.
 */
export async function untilFaultActs(
  context: WaitContext,
  scenario: Scenario,
  outcome: () => FaultOutcome,
  what: string,
): Promise<FaultOutcome> {
  const { contract } = context.deps;
  const stimulusAt = context.deps.clock.now();
  try {
    return await pollUntil<FaultOutcome>(
      async () => {
        const now = outcome();
        if (now.status !== "not-reached") return { done: true, value: now };
        const cr = await context.deps.kube.tryGet(scenario.customResource);
        const readiness = evaluateReadiness(contract.readiness, cr);
        // With `quiet` readiness, "ready" means nothing until the operator has created something.
        const started =
          contract.readiness.kind !== "quiet" || scenario.operatorWrites({ effect: "created" }).length > 0;
        if (
          readiness.ready &&
          started &&
          scenario.quiescence.isQuiet(scenario.quiescence.silence(stimulusAt))
        ) {
          return { done: true, value: now };
        }
        return { done: false, reason: `${what} has not happened yet; ${readiness.reason}` };
      },
      {
        description: what,
        timeoutMs: contract.timeouts.convergeMs,
        intervalMs: 50,
        signal: context.deps.signal,
      },
    );
  } catch (error) {
    if (!(error instanceof PollTimeoutError)) throw error;
    throw new Inconclusive(
      `neither ${what} happened nor the sample converged within ${error.timeoutMs / 1000} s: ${error.lastReason}`,
      await scenario.operatorLogNotes(),
    );
  }
}

/** Waits until `remaining` lists nothing; Inconclusive (naming what is left) at the convergence timeout. */
export async function untilNothingLeft(
  context: WaitContext,
  scenario: Scenario,
  what: string,
  remaining: () => Promise<string[]>,
): Promise<void> {
  try {
    await pollUntil(
      async () => {
        const left = await remaining();
        return left.length === 0
          ? { done: true, value: undefined }
          : { done: false, reason: `left: ${left.join(", ")}` };
      },
      {
        description: what,
        timeoutMs: context.deps.contract.timeouts.convergeMs,
        intervalMs: 100,
        signal: context.deps.signal,
      },
    );
  } catch (error) {
    if (!(error instanceof PollTimeoutError)) throw error;
    throw new Inconclusive(
      `no ${what} within ${error.timeoutMs / 1000} s: ${error.lastReason}`,
      await scenario.operatorLogNotes(),
    );
  }
}
