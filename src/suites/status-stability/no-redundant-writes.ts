import { describeClockWrite, ticksApart } from "../../scenario/clock-marks.js";
import { writeEvidence } from "../../scenario/reference-state.js";
import { defineCheck, type Judgement } from "../check.js";
import { maybeTickNote, maybeTicksApart } from "../shared/clock-children.js";
import { clockSuspected, maybeTicksVerdict } from "./no-avoidable-writes.js";
import {
  neverQuietInconclusive,
  neverQuietWrites,
  restartAndTouches,
  shown,
  TARGET,
} from "./restart-and-touches.js";

/**
 * Over the same stimuli as no-avoidable-writes, no write request at all,
 * not even one the server finds a no-op.
 */
export const noRedundantWrites = defineCheck({
  id: "status-stability/no-redundant-writes",
  level: "SHOULD",
  summary: "over the same stimuli, no write request at all, not even one the server finds a no-op",
  targets: () => [TARGET],
  targetName: (target) => target,
  observer: restartAndTouches,
  judge(observation, contract): Judgement {
    if (observation.outcome === "never-quiet") {
      const { state, judged, notes } = neverQuietWrites(observation, contract);
      // Not ready and no work without end (neverQuietWrites): an operator still making progress writes too.
      if (!judged && !observation.ready) return neverQuietInconclusive(observation);
      return {
        status: "failed",
        message: `${state}: ${observation.writes.length} write request(s)`,
        evidence: { writes: shown(observation.writes), notes },
      };
    }
    // A tick of the operator's own clock answers neither the restart nor the touches.
    const { ticks, rest: answers } = ticksApart(observation.after);
    const { maybeTicks, rest: after } = maybeTicksApart(answers, clockSuspected(observation, contract));
    const notes = [
      ...ticks.map((e) => `not counted: #${e.seq}, made by the operator's clock: ${describeClockWrite(e)}`),
      ...maybeTicks.map(maybeTickNote),
    ];
    if (after.length > 0) {
      return {
        status: "failed",
        message: `${after.length} operator write request(s) where none was needed (the server found ${after.filter((e) => e.effect === "no-op").length} of them no-ops)`,
        evidence: { writes: after.map(writeEvidence), ...(notes.length > 0 ? { notes } : {}) },
      };
    }
    if (maybeTicks.length > 0) return maybeTicksVerdict(maybeTicks, notes);
    return {
      status: "passed",
      message:
        ticks.length > 0
          ? `no write request but ${ticks.length} of the operator's clock`
          : "no write request at all",
      ...(notes.length > 0 ? { evidence: { writes: ticks.map(writeEvidence), notes } } : {}),
    };
  },
});
