import { defineSuite } from "../check.js";
import { cleanupRetried } from "./cleanup-retried.js";
import { crashDuringCleanup } from "./crash-during-cleanup.js";
import { noResurrection } from "./no-resurrection.js";

export const deletion = defineSuite({
  name: "deletion",
  summary:
    "an operator that guards its custom resource with a finalizer finishes its cleanup through crashes, retries failed cleanups, and recreates nothing while terminating",
  checks: [crashDuringCleanup, cleanupRetried, noResurrection],
});
