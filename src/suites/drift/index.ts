import { defineSuite } from "../check.js";
import { deletedChild } from "./deleted-child.js";
import { managedField } from "./managed-field.js";

export const drift = defineSuite({
  name: "drift",
  summary:
    "children changed or deleted behind the operator's back are repaired in place, keeping what other writers added",
  checks: [managedField, deletedChild],
});
