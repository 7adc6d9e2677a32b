import { defineCheck } from "../check.js";
import {
  crashLineName,
  crashLineObserver,
  crashLineSpecs,
  crashLineTargets,
  judgeCrashLine,
  type CrashLineObservation,
  type CrashLineTarget,
} from "./crash-line-scenario.js";

/**
 * One scenario per write of the reference's sequence that is not a create
 * (updates, patches, status writes, deletes): the operator is killed right
 * after the API server answered it, restarted, and must converge to the
 * reference, recreating nothing it had created (crash-line-scenario.ts).
 */
export const crashAfterWrite = defineCheck<CrashLineTarget, CrashLineObservation>({
  id: "idempotency/crash-after-write",
  level: "MUST",
  summary:
    "killed right after any other write of its sequence and restarted, the operator ends as the reference, nothing recreated",
  references: crashLineSpecs,
  targets: (context) =>
    crashLineTargets(context, false, "the operator made no write but creates on its way to the reference"),
  targetName: crashLineName,
  skipTarget: ({ line }) => line.timing,
  // Its own observer, not crash-after-create's: its scenarios are assigned to shards under its own id.
  observer: crashLineObserver("crash-after-write"),
  judge: judgeCrashLine,
});
