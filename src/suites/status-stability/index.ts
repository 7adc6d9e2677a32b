import { defineSuite } from "../check.js";
import { heldUnavailable } from "./held-unavailable.js";
import { lastTransitionTime } from "./last-transition-time.js";
import { noAvoidableWrites } from "./no-avoidable-writes.js";
import { noRedundantWrites } from "./no-redundant-writes.js";
import { observedGeneration } from "./observed-generation.js";

/** One scenario (restart-and-touches.ts), four verdicts; and a child held unavailable while the sample converges. */
export const statusStability = defineSuite({
  name: "status-stability",
  summary:
    "after convergence, a restart and foreign touches change nothing: no writes, stable conditions, an observedGeneration that follows the spec; and a child held unavailable makes no condition churn",
  checks: [noAvoidableWrites, noRedundantWrites, lastTransitionTime, observedGeneration, heldUnavailable],
});
