import { conditionsOf, type Condition } from "../../contract/observed-generation.js";
import { describeVolatile, promisesFor, volatileOnly } from "../../contract/promises.js";
import { writeEvidence } from "../../scenario/reference-state.js";
import { formatObjectPath } from "../../util/object-paths.js";
import { defineCheck, type Judgement } from "../check.js";
import { changedOnlyVolatile, ObjectKinds } from "../shared/promised.js";
import { neverQuietInconclusive, restartAndTouches, TARGET } from "./restart-and-touches.js";

/** A condition whose status stayed but whose lastTransitionTime moved. */
export interface MovedTransitionTime {
  readonly type: string;
  readonly status: unknown;
  readonly expected: unknown;
  readonly actual: unknown;
}

/**
 * Conditions whose status did not change keep their lastTransitionTime,
 * through the restart and the foreign touches.
 */
export const lastTransitionTime = defineCheck({
  id: "status-stability/last-transition-time",
  level: "MUST",
  summary: "conditions whose status did not change keep their lastTransitionTime",
  targets: () => [TARGET],
  targetName: (target) => target,
  observer: restartAndTouches,
  judge(observation, contract): Judgement {
    if (observation.outcome === "never-quiet") return neverQuietInconclusive(observation);
    const { reference, settled, after } = observation;
    const before = conditionsOf(reference.customResource.status);
    if (before.length === 0)
      return { status: "skipped", message: "the custom resource reports no conditions" };
    // A condition's lastTransitionTime the contract declares volatile may move; a write that
    // changed only volatile fields (a heartbeat) is no transition and needs no reading.
    const kinds = new ObjectKinds(contract, reference.children);
    const crPromises = promisesFor(
      contract.promises,
      contract.customResource.kind,
      contract.sample.object.metadata?.name ?? "",
    );
    const allMoved = movedTransitionTimes(before, conditionsOf(settled.status));
    const volatileTimes = allMoved.flatMap((m) => {
      const path = formatObjectPath([
        { field: "status" },
        { field: "conditions" },
        { key: "type", value: m.type },
        { field: "lastTransitionTime" },
      ]);
      const only = volatileOnly(crPromises, [path]);
      return only !== "unknown" && only.only ? [{ moved: m, fields: only.fields }] : [];
    });
    const moved = allMoved.filter((m) => !volatileTimes.some((v) => v.moved === m));
    const statusWrites = after.filter(
      (e) =>
        e.resource === contract.customResource.resource &&
        e.verb !== "delete" &&
        !changedOnlyVolatile(e, kinds),
    );
    const volatileNotes = volatileTimes.map(
      (v) =>
        `not counted: condition ${v.moved.type} got a new lastTransitionTime in a volatile field: ${describeVolatile(v.fields)}`,
    );
    // A condition that really went False and back was rightly given new times: the operator's own
    // status writes (their bodies are JSON for custom resources) show the way it went.
    const transitioned = moved.filter((m) =>
      statusWrites.some((e) => conditionStatusIn(e.body, m.type, m.status) === "different"),
    );
    const unexplained = moved.filter((m) => !transitioned.includes(m));
    const unreadable =
      unexplained.length > 0 && statusWrites.some((e) => e.effect !== "no-op" && e.body === undefined);
    if (unexplained.length > 0 && unreadable) {
      return {
        status: "inconclusive",
        message:
          "a condition got a new lastTransitionTime and some of the operator's status writes could not be read to tell whether it transitioned",
        evidence: { writes: statusWrites.map(writeEvidence) },
      };
    }
    if (unexplained.length > 0) {
      return {
        status: "failed",
        message: `${unexplained.length} condition(s) kept their status but got a new lastTransitionTime`,
        evidence: {
          diffs: unexplained.map((m) => ({
            object: "custom resource",
            path: `status.conditions[type=${m.type}].lastTransitionTime`,
            expected: m.expected,
            actual: m.actual,
          })),
          writes: statusWrites.map(writeEvidence),
          ...(volatileNotes.length > 0 ? { notes: volatileNotes } : {}),
        },
      };
    }
    return {
      status: "passed",
      message: `${before.length - volatileTimes.length} condition(s) kept their lastTransitionTime${volatileTimes.length > 0 ? ` (${volatileTimes.length} volatile by the contract)` : ""}`,
      ...(volatileNotes.length > 0 ? { evidence: { notes: volatileNotes } } : {}),
    };
  },
});

/** The conditions of `before` that have the same status in `after` but another lastTransitionTime. Pure. */
export function movedTransitionTimes(
  before: readonly Condition[],
  after: readonly Condition[],
): MovedTransitionTime[] {
  return before.flatMap((b) => {
    const a = after.find((c) => c.type === b.type);
    if (!a || a.status !== b.status || a.lastTransitionTime === b.lastTransitionTime) return [];
    return [{ type: b.type, status: b.status, expected: b.lastTransitionTime, actual: a.lastTransitionTime }];
  });
}

/** Whether a status write's body set condition `type` to a status other than `status`. Pure. */
export function conditionStatusIn(
  body: unknown,
  type: string,
  status: unknown,
): "same" | "different" | "absent" {
  const condition = conditionsOf((body as { status?: unknown } | undefined)?.status).find(
    (c) => c.type === type,
  );
  if (!condition) return "absent";
  return condition.status === status ? "same" : "different";
}
