import { secretHash } from "../proxy/secret-redaction.js";
import type { WriteEntry } from "../proxy/write-log.js";
import { formatObjectPath } from "../util/object-paths.js";
import { valueAt } from "../util/records.js";
import { keyedPath, type ValuePath } from "./life-values.js";

/**
 * What a life's write log says of one child's values after its create:
 * which operator writes changed a value again (a regeneration, unless it
 * repairs a kit write or fills in what the create left unset). Pure.
 */

/** A child as the write log names it; its UID, when known, tells its writes from a predecessor's of the same name. */
export interface WrittenChild {
  readonly group: string;
  readonly resource: string;
  readonly name: string;
  readonly uid?: string;
}

/** The successful writes to the child's object itself (no subresource), and the operator's create of it (the last one: the object as it is now). */
export function writesOfChild(
  writes: readonly WriteEntry[],
  child: WrittenChild,
): { readonly created: WriteEntry | undefined; readonly ofChild: readonly WriteEntry[] } {
  const ofChild = writes.filter(
    (w) =>
      w.group === child.group &&
      w.resource === child.resource &&
      w.name === child.name &&
      !w.subresource &&
      w.code >= 200 &&
      w.code < 300 &&
      (child.uid === undefined || w.uid === undefined || w.uid === child.uid),
  );
  const created = ofChild.filter((w) => w.actor === "operator" && w.effect === "created").at(-1);
  return { created, ofChild };
}

/**
 * A path as the write log's changedPaths name it: "spec.ports[name=http].port"
 * (keyedPath: list positions read in `object`, the child as it is in the
 * life the writes are of). Undefined when a position is not in `object`.
 */
function changedPathOf(path: ValuePath, object: unknown): string | undefined {
  const keyed = keyedPath(path, object);
  return keyed && formatObjectPath(keyed);
}

/**
 * The operator's writes to `child` after its create in `writes` (every
 * write of the life, the kit's too) that changed the value at `path` (the
 * write log's changedPaths; list positions read in `object`, the child in
 * that life). The operator's first change after a kit write that touched
 * the value is its repair of that write, not counted. A change the log
 * names only as the whole list holding the value (a list of another
 * length) is not counted: which element changed cannot be told.
 */
export function changesAfterCreate(
  writes: readonly WriteEntry[],
  child: WrittenChild,
  path: ValuePath,
  object: unknown,
): WriteEntry[] {
  const field = changedPathOf(path, object);
  if (field === undefined) return [];
  const { created, ofChild } = writesOfChild(writes, child);
  if (!created) return [];
  const changes: WriteEntry[] = [];
  let repairDue = false;
  for (const w of ofChild) {
    if (w.seq <= created.seq) continue;
    const touches = (w.changedPaths ?? []).some(
      (p) => p === field || p.startsWith(`${field}.`) || p.startsWith(`${field}[`),
    );
    if (!touches) continue;
    if (w.actor !== "operator") {
      // A change the kit made first (a drift) is the operator's to repair, not a regeneration.
      repairDue = true;
      continue;
    }
    if (w.effect !== "changed") continue;
    if (repairDue) repairDue = false;
    else changes.push(w);
  }
  return changes;
}

/**
 * Whether the operator's create of `child` left the value at `path` unset
 * (absent, null or empty in the body it sent), so that its first change
 * after the create fills it in rather than generating it anew; undefined
 * when the create's body is not known (protobuf) or the path has list
 * positions.
 */
export function createdWithout(
  writes: readonly WriteEntry[],
  child: WrittenChild,
  path: ValuePath,
): boolean | undefined {
  if (path.some((part) => typeof part === "number")) return undefined;
  const { created } = writesOfChild(writes, child);
  if (created?.body === undefined || typeof created.body !== "object" || created.body === null)
    return undefined;
  // The write log keeps a Secret's values as keyed hashes: "" reads as the hash of "".
  const empty = child.group === "" && child.resource === "secrets" ? secretHash("") : "";
  const unset = (at: ValuePath) => {
    const value = valueAt(created.body, at);
    return value === undefined || value === null || value === "" || value === empty;
  };
  // A Secret created with stringData has its data set by the server from it.
  if (child.group === "" && child.resource === "secrets" && path[0] === "data") {
    return unset(path) && unset(["stringData", ...path.slice(1)]);
  }
  return unset(path);
}
