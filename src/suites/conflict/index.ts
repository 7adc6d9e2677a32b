import { defineSuite } from "../check.js";
import { childUpdate } from "./child-update.js";
import { statusUpdate } from "./status-update.js";

/**
 * Real 409s: the kit writes an object right before the operator's write of
 * it (an annotation on a child; the next spec update on the custom
 * resource), so a write based on the old read is refused by the API server
 * itself. The operator must re-read inside its retry, keep the other
 * writer's change and never report on a spec it has not acted on.
 */
export const conflict = defineSuite({
  name: "conflict",
  summary:
    "real 409s on child and status writes: the operator re-reads, keeps the other writer's change and never reports on a spec it has not acted on",
  checks: [childUpdate, statusUpdate],
});
