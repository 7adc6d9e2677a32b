import { defineSuite } from "../check.js";
import { crashAfterCreate } from "./crash-after-create.js";
import { crashAfterWrite } from "./crash-after-write.js";
import { noTickOverwrite } from "./no-tick-overwrite.js";
import { preexistingChild } from "./preexisting-child.js";
import { recreateSameName } from "./recreate-same-name.js";

export const idempotency = defineSuite({
  name: "idempotency",
  summary:
    "killed after any write, meeting a child that exists first, or recreated under the same name, the operator ends as the reference: nothing duplicated, lost or taken over; and a tick of its own clock leaves what earlier ticks made",
  checks: [crashAfterCreate, crashAfterWrite, preexistingChild, recreateSameName, noTickOverwrite],
});
