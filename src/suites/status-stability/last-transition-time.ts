import { conditionsOf, type Condition } from "../../contract/observed-generation.js";
import { describeVolatile, promisesFor, volatileOnly } from "../../contract/promises.js";
import { writeEvidence } from "../../scenario/reference-state.js";
import type { Contract } from "../../contract/load-contract.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import { formatObjectPath, parsePath, pathWithin, type ObjectPath } from "../../util/object-paths.js";
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
    // A write that moved a condition's time and left its status is decisive wherever it happened:
    // while the sample converged, as much as after (a loop that flips a condition and back in one
    // reconcile shows nowhere else).
    const kinds = new ObjectKinds(
      contract,
      observation.outcome === "never-quiet" ? observation.children : observation.reference.children,
    );
    const history =
      observation.outcome === "never-quiet"
        ? observation.writes
        : [...observation.reference.writes, ...observation.after];
    const churn = movedWithoutTransition(history, contract, kinds);
    if (churn.length > 0) return churnVerdict(churn);
    if (observation.outcome === "never-quiet") return neverQuietInconclusive(observation);
    const { reference, settled, after } = observation;
    const before = conditionsOf(reference.customResource.status);
    if (before.length === 0)
      return { status: "skipped", message: "the custom resource reports no conditions" };
    // A condition's lastTransitionTime the contract declares volatile may move; a write that
    // changed only volatile fields (a heartbeat) is no transition and needs no reading.
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

/** An operator write that gave conditions a new lastTransitionTime and left their status as it was. */
export interface MovedWithoutTransition {
  readonly write: WriteEntry;
  /** The conditions' types. */
  readonly types: readonly string[];
}

/**
 * The operator's writes of the custom resource that changed a condition's
 * lastTransitionTime but not its status, from the fields each write changed
 * in the stored object (changedPaths: the states just before and after it,
 * whoever wrote before). The time is that of the condition's last change of
 * status (the API conventions), so such a write states a transition that
 * did not happen: typically a condition set one way and back within one
 * reconcile, or stamped with the time on every write. A condition that
 * appears changes its status too (from none), so it is never counted. Times
 * the contract declares volatile are left out; writes whose changed fields
 * are unknown cannot be counted. Pure.
 */
export function movedWithoutTransition(
  writes: readonly WriteEntry[],
  contract: Pick<Contract, "customResource" | "promises">,
  kinds: ObjectKinds,
): MovedWithoutTransition[] {
  const { group, resource } = contract.customResource;
  return writes.flatMap((write) => {
    if (write.actor !== "operator" || write.group !== group || write.resource !== resource) return [];
    if (write.effect !== "changed" || write.changedPaths === undefined) return [];
    const volatile = kinds.promisesOf(write).volatile;
    const changed = write.changedPaths.flatMap((text) => {
      try {
        return [parsePath(text)];
      } catch {
        return [];
      }
    });
    const conditionField = (path: ObjectPath, field: string): string | undefined => {
      const [status, conditions, element, leaf, ...rest] = path;
      if (rest.length > 0 || !status || !conditions || !element || !leaf) return undefined;
      const isField = (segment: ObjectPath[number], name: string) =>
        "field" in segment && segment.field === name;
      if (!isField(status, "status") || !isField(conditions, "conditions") || !isField(leaf, field))
        return undefined;
      return "key" in element && element.key === "type" ? element.value : undefined;
    };
    const moved = changed.flatMap((path) => {
      const type = conditionField(path, "lastTransitionTime");
      if (type === undefined || volatile.some((v) => pathWithin(path, v.path))) return [];
      return changed.some((other) => conditionField(other, "status") === type) ? [] : [type];
    });
    return moved.length > 0 ? [{ write, types: [...new Set(moved)] }] : [];
  });
}

/** The verdict on writes that restamped a condition: failed, each write and its conditions in the evidence. Pure. */
export function churnVerdict(churn: readonly MovedWithoutTransition[]): Judgement {
  const types = [...new Set(churn.flatMap((c) => c.types))];
  return {
    status: "failed",
    message: `${churn.length} operator write(s) gave condition(s) ${types.join(", ")} a new lastTransitionTime and left their status as it was`,
    evidence: {
      writes: churn.map((c) => writeEvidence(c.write)),
      notes: churn.map(
        (c) =>
          `write ${c.write.seq} changed ${c.types.map((t) => `status.conditions[type=${t}].lastTransitionTime`).join(", ")} but not the condition's status: a transition that did not happen`,
      ),
    },
  };
}
