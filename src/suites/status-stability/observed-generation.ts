import { GIVE_UP_IDLE_MS } from "../../scenario/quiescence.js";
import { writeEvidence } from "../../scenario/reference-state.js";
import { defineCheck, type Judgement } from "../check.js";
import {
  generationBeforeUpdate,
  neverQuietInconclusive,
  restartAndTouches,
  TARGET,
} from "./restart-and-touches.js";

/**
 * observedGeneration stays at the generation through the restart and the
 * metadata-only touches, then catches up with the contract's first spec
 * update (the scenario's last phase: it changes the spec).
 */
export const observedGeneration = defineCheck({
  id: "status-stability/observed-generation",
  level: "MUST",
  summary: "observedGeneration catches up after a spec change and stays put for metadata-only changes",
  targets: () => [TARGET],
  targetName: (target) => target,
  observer: restartAndTouches,
  needs: ["spec update"],
  judge(observation, contract): Judgement {
    if (observation.outcome === "never-quiet") return neverQuietInconclusive(observation);
    const before = generationBeforeUpdate(observation.reference, observation.settled);
    if (before.kind === "none") {
      return { status: "skipped", message: "the custom resource reports no observedGeneration" };
    }
    if (before.kind === "behind") {
      return {
        status: "failed",
        message: `after metadata-only changes observedGeneration is ${before.observed ?? "?"}, generation ${before.generation ?? "?"}`,
      };
    }
    if (!contract.updates[0]) {
      return {
        status: "passed",
        message: `observedGeneration stayed at generation ${before.generation ?? "?"} through metadata-only changes (no spec update in the contract to follow)`,
      };
    }
    const update = observation.specUpdate;
    // The observer follows the update whenever this check is judged and it is due: absent, it did not run.
    if (!update) return { status: "inconclusive", message: "the spec update was not applied" };
    switch (update.outcome) {
      case "refused":
        return { status: "inconclusive", message: update.message };
      case "caught-up":
        return {
          status: "passed",
          message: `observedGeneration caught up with the spec update (generation ${update.generation ?? "?"}) and stayed put for metadata-only changes`,
        };
      case "gave-up":
        return {
          status: "failed",
          message: `observedGeneration did not catch up with the spec update: ${update.lastReason}, and the operator has made no write for ${GIVE_UP_IDLE_MS / 1000} s`,
          evidence: { writes: update.writes.map(writeEvidence), operatorLog: update.operatorLog },
        };
      case "deadline":
        // A deadline is no evidence: the operator was still writing when the time ran out.
        return {
          status: "inconclusive",
          message: `no verdict within ${(update.timeoutMs ?? 0) / 1000} s of the spec update: the operator was still writing at the deadline (last seen: ${update.lastReason})`,
          evidence: { writes: update.writes.map(writeEvidence), operatorLog: update.operatorLog },
        };
    }
  },
});
