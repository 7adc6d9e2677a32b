import { normalisedKey } from "../../proxy/faults.js";
import { writeEvidence } from "../../scenario/reference-state.js";
import { NeverQuiet } from "../../scenario/scenario.js";
import { defineCheck, type Judgement } from "../check.js";
import { runawayCreation } from "../shared/runaway-writes.js";
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
 * One scenario per create of the reference's write sequence: the operator
 * is killed right after the API server answered the create, restarted, and
 * must converge to the reference without duplicating what it had created
 * (crash-line-scenario.ts).
 */
export const crashAfterCreate = defineCheck<CrashLineTarget, CrashLineObservation>({
  id: "idempotency/crash-after-create",
  level: "MUST",
  summary:
    "killed right after a create succeeded and restarted, the operator duplicates nothing, keeps what it created and ends as the reference",
  references: crashLineSpecs,
  targets: (context) =>
    crashLineTargets(context, true, "the operator created nothing on its way to the reference"),
  targetName: crashLineName,
  skipTarget: ({ line }) => line.timing,
  observer: crashLineObserver("crash-after-create"),
  judge: judgeCrashLine,
  judgeWithoutReference: duplicatesWithoutCrash,
});

/**
 * The sample never converged because the operator kept creating objects of
 * one name pattern (a generateName, or a name derived from a UID): it
 * duplicates children without any crash, which is what crash-after-create
 * guards against. Judged from the reference's own writes; the crash lines
 * themselves cannot run without a reference, so the other checks stay
 * inconclusive. Undefined when the writes show no such creation. Pure.
 */
export function duplicatesWithoutCrash(error: unknown): Judgement | undefined {
  if (!(error instanceof NeverQuiet)) return undefined;
  const runaway = runawayCreation(error.writes, normalisedKey);
  if (!runaway) return undefined;
  const creates = error.writes.filter((e) => e.effect === "created");
  return {
    status: "failed",
    message: `without any crash, the operator created ${runaway[0]} ${runaway[1]} times while the sample was converging, and never fell quiet: every pass creates another (${error.message})`,
    evidence: {
      writes: creates.slice(-10).map(writeEvidence),
      notes: [
        `${creates.length} create(s) in the wait; the last ${Math.min(10, creates.length)} shown`,
        ...error.notes,
      ],
    },
  };
}
