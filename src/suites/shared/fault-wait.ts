import { evaluateReadiness } from "../../contract/readiness.js";
import type { FaultOutcome } from "../../proxy/faults.js";
import { doneRegardless, holds, notYet, untilQuiet } from "../../scenario/quiet-wait.js";
import { Inconclusive, type Scenario } from "../../scenario/scenario.js";
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
  const now = context.deps.clock.now();
  // Within a clock horizon the write awaited may be a tick still to come: quiet counts after it.
  const stimulusAt = scenario.quietNotBefore(now);
  const acted = await untilQuiet<FaultOutcome>(scenario, {
    awaited: what,
    stimulusAt,
    timeoutMs: contract.timeouts.convergeMs + (stimulusAt - now),
    intervalMs: 50,
    signal: context.deps.signal,
    observe: async () => {
      const now = outcome();
      if (now.status !== "not-reached") return doneRegardless(now);
      const cr = await context.deps.kube.tryGet(scenario.customResource);
      const readiness = evaluateReadiness(contract.readiness, cr);
      // With `quiet` readiness, "ready" means nothing until the operator has created something.
      const started =
        contract.readiness.kind !== "quiet" || scenario.operatorWrites({ effect: "created" }).length > 0;
      const reason = `${what} has not happened yet; ${readiness.reason}`;
      return readiness.ready && started ? holds(now, reason) : notYet(reason);
    },
    atDeadline: async ({ timeoutMs, lastReason }) => {
      throw new Inconclusive(
        `neither ${what} happened nor the sample converged within ${timeoutMs / 1000} s: ${lastReason}`,
        await scenario.operatorLogNotes(),
      );
    },
  });
  return acted.value;
}

/** Waits until `remaining` lists nothing; Inconclusive (naming what is left) at the convergence timeout. */
export async function untilNothingLeft(
  context: WaitContext,
  scenario: Scenario,
  what: string,
  remaining: () => Promise<string[]>,
): Promise<void> {
  await untilQuiet(scenario, {
    awaited: what,
    // Nothing left ends the wait whether the operator is quiet or not: no silence is read.
    stimulusAt: context.deps.clock.now(),
    signal: context.deps.signal,
    observe: async () => {
      const left = await remaining();
      return left.length === 0 ? doneRegardless(undefined) : notYet(`left: ${left.join(", ")}`);
    },
  });
}
