import type { Contract } from "../../contract/load-contract.js";
import { childFamily, childNamedLikeATick } from "./clock-children.js";
import type { SpecReference } from "../../scenario/spec-references.js";

/**
 * Whether a reference child is one its operator's clock made, or of a
 * family it made (clockFamily), or, when the reference ended with a delayed
 * requeue pending and no horizon is set (ChildRoles.clockPending), one named as a tick is (namedLikeATick): a tick may have
 * fallen due inside other work there.
 */
export function isClockChild(
  reference: Pick<SpecReference, "children" | "roles"> | undefined,
  child: SpecReference["children"][number],
): boolean {
  if (child.madeByClock) return true;
  if (reference?.roles?.clockPending && childNamedLikeATick(child, reference.roles)) return true;
  const family = childFamily(child);
  return (reference?.children ?? []).some((c) => c.madeByClock && childFamily(c) === family);
}

/**
 * The reference's children a check can aim a scenario at: without a clock
 * horizon, not those the operator's clock made (nor their family: a tick
 * that came while the operator was busy), since a scenario's life reaches
 * another tick, or none, by the time it acts. With a horizon every life
 * holds the ticks due by then: all of them.
 */
export function answeredChildren(
  reference: Pick<SpecReference, "children" | "roles"> | undefined,
  contract: Pick<Contract, "clock">,
): SpecReference["children"] {
  const children = reference?.children ?? [];
  if (contract.clock.horizonMs !== undefined) return children;
  return children.filter((c) => !isClockChild(reference, c));
}

/**
 * Why a check has nothing to judge for want of children (`why`), and, when
 * the reference's children came from the operator's clock, or its operator
 * had a delayed requeue pending as it converged, that they may: a check never
 * skips such an operator in silence.
 */
export function forWantOfChildren(
  reference: Pick<SpecReference, "delayedRequeue" | "children"> | undefined,
  why: string,
): string {
  if (reference?.children.some((c) => c.madeByClock)) {
    return `${why} but those its clock made, which a scenario cannot count on reaching: set clock.horizon in the contract to wait for them`;
  }
  return reference?.delayedRequeue
    ? `${why}; its last reconcile had asked for a delayed requeue when it converged, so its children may come from its clock: set clock.horizon in the contract to wait for them`
    : why;
}
