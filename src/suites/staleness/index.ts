import { defineSuite } from "../check.js";
import { missedIntermediateState } from "./missed-intermediate-state.js";
import { ownCreateUnseen } from "./own-create-unseen.js";
import { restartFromThePast } from "./restart-from-the-past.js";

/**
 * Stale views (docs/design/staleness.md): the operator's caches lag the API
 * server, miss intermediate states, or start from the past, through the
 * proxy's watch seam and the API server's own history, on an unmodified
 * operator. Every scenario's faults prove in the evidence that they acted;
 * one that did not (nothing held, nothing coalesced, a past the API server
 * no longer had) makes the scenario inconclusive, never a pass.
 */
export const staleness = defineSuite({
  name: "staleness",
  summary:
    "a cache that has not seen its own creates, a watch that missed intermediate states, or a restart from the past costs no object, and the operator still ends as the reference",
  checks: [ownCreateUnseen, missedIntermediateState, restartFromThePast],
});
