import type { SpecReference } from "../../scenario/spec-references.js";

/**
 * Why a check has nothing to judge for want of children (`why`), and, when
 * the reference's operator had a delayed requeue pending as it converged,
 * that its children may come from its clock: a check never skips such an
 * operator in silence.
 */
export function forWantOfChildren(
  reference: Pick<SpecReference, "delayedRequeue"> | undefined,
  why: string,
): string {
  return reference?.delayedRequeue
    ? `${why}; its last reconcile had asked for a delayed requeue when it converged, so its children may come from its clock: set clock.horizon in the contract to wait for them`
    : why;
}
