import { defineSuite } from "../check.js";
import { updateEqualsCreation } from "./update-equals-creation.js";

/**
 * The differential suite: the same desired state reached along two paths
 * must give the same state (Acto's differential oracle, on an unmodified
 * operator). Every other suite compares the operator with its own
 * reference run, so a mistake the reference makes too is invisible there.
 */
export const differential = defineSuite({
  name: "differential",
  summary: "the same desired state, reached by an update or by a creation, gives the same state",
  checks: [updateEqualsCreation],
});
