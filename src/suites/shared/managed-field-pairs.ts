import { keyedPath, positionsIn, type ValuePath } from "../../scenario/life-values.js";
import { formatObjectPath, type ObjectPath } from "../../util/object-paths.js";
import { operatorManagedPaths, valueAt } from "./drift-targets.js";

// The fields the operator manages in two objects of one role, paired by what they are: what the
// differential compares (end-state.ts, fields "operator-managed"). Pure.

/** One field the operator manages in either of two objects of one role, found in each by what it is. */
export interface ManagedFieldPair {
  /** As both objects read it: list positions as what the elements are (`ports[name=http].containerPort`). */
  readonly path: ObjectPath;
  /** Its positions in the first object; absent when the first has no such field. */
  readonly expected?: ValuePath;
  /** Its positions in the second object; absent when the second has no such field. */
  readonly actual?: ValuePath;
}

/**
 * Every field the operator manages (its managedFields: drift-targets.ts'
 * operatorManagedPaths) in `expected` or in `actual`, as pairs of positions:
 * a field one object has and the other lacks (a key added on an update and
 * never pruned) is a pair with one side. Only what compares across lives
 * (lifeValue): the spec, data and the like, labels and annotations; not the
 * status, not the rest of metadata. Pure.
 */
export function managedFieldPairs(expected: unknown, actual: unknown): ManagedFieldPair[] {
  const pairs = new Map<string, ManagedFieldPair>();
  const comparable = (path: ValuePath) =>
    path.length > 0 &&
    path[0] !== "status" &&
    (path[0] !== "metadata" || path[1] === "labels" || path[1] === "annotations");
  for (const [side, object, other] of [
    ["expected", expected, actual],
    ["actual", actual, expected],
  ] as const) {
    for (const managed of operatorManagedPaths(object)) {
      if (!comparable(managed)) continue;
      const path = keyedPath(managed, object);
      if (!path) continue;
      const text = formatObjectPath(path);
      if (pairs.has(text)) continue;
      const there = positionsIn(path, other);
      const otherHas = there !== undefined && valueAt(other, there) !== undefined;
      const otherSide = otherHas ? there : undefined;
      pairs.set(
        text,
        side === "expected"
          ? { path, expected: managed, ...(otherSide ? { actual: otherSide } : {}) }
          : { path, actual: managed, ...(otherSide ? { expected: otherSide } : {}) },
      );
    }
  }
  return [...pairs.values()];
}
