import { isDeepStrictEqual } from "node:util";
import type { Contract } from "../../contract/load-contract.js";
import { normalisedName, withoutUids } from "../../proxy/faults.js";
import type { Evidence } from "../../report/report-model.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import type { ChildRecord, LiveChild } from "../../scenario/reference-state.js";
import type { ReferenceChild } from "../../scenario/spec-references.js";
import { driftTargets, formatPath, shownValue, valueAt } from "./drift-targets.js";
import type { ObjectKinds } from "./promised.js";

/** How a scenario's end state differs from the reference of the same spec. */
export interface EndStateComparison {
  /** Reference children with no live counterpart ("Service/hello"). */
  readonly missing: readonly string[];
  /** Kinds with more live children than the reference has, and their names. */
  readonly duplicates: readonly {
    readonly kind: string;
    readonly reference: number;
    readonly now: number;
    readonly names: readonly string[];
  }[];
  /** Fields the operator manages that differ from the reference (UIDs in values normalised). */
  readonly diffs: NonNullable<Evidence["diffs"]>;
  /** The live children compared. */
  readonly children: readonly ChildRecord[];
}

export function endStateMatches(comparison: EndStateComparison): boolean {
  return (
    comparison.missing.length === 0 && comparison.duplicates.length === 0 && comparison.diffs.length === 0
  );
}

/** One sentence for a comparison that did not match. */
export function describeMismatch(comparison: EndStateComparison): string {
  const parts: string[] = [];
  for (const d of comparison.duplicates) {
    parts.push(`${d.now} ${d.kind}(s) where the reference has ${d.reference} (${d.names.join(", ")})`);
  }
  if (comparison.missing.length > 0) parts.push(`missing ${comparison.missing.join(", ")}`);
  if (comparison.diffs.length > 0) {
    parts.push(`${comparison.diffs.length} managed field(s) differ from the reference`);
  }
  return parts.join("; ");
}

/**
 * Compares the children the operator created in a scenario (those that still
 * exist, as observed) with the children of a spec's reference: matched by
 * kind and normalised name, the fields the operator manages compared on the
 * drift suite's targets (the values the operator sets, not what servers
 * default or controllers add), and counted per kind. Pure.
 */
export function compareEndStates(
  live: readonly LiveChild[],
  reference: readonly ReferenceChild[],
  drift: Contract["drift"],
): EndStateComparison {
  const key = (c: ChildRecord) => `${c.ref.kind}/${normalisedName(c.ref)}`;
  const missing: string[] = [];
  const diffs: NonNullable<Evidence["diffs"]>[number][] = [];
  for (const expected of reference) {
    const now = live.find((c) => key(c) === key(expected));
    if (!now) {
      missing.push(key(expected));
      continue;
    }
    for (const target of driftTargets({ kind: expected.ref.kind, object: expected.object }, drift)) {
      const actual = valueAt(now.object, target.path);
      if (!isDeepStrictEqual(withoutUids(actual), withoutUids(target.value))) {
        const shown = (value: unknown) => shownValue(expected.ref.kind, target.path, value);
        diffs.push({
          object: key(expected),
          path: formatPath(target.path),
          expected: shown(target.value),
          actual: shown(actual),
        });
      }
    }
  }
  const count = (list: readonly ChildRecord[]) => {
    const byKind = new Map<string, ChildRecord[]>();
    for (const c of list) byKind.set(c.ref.kind, [...(byKind.get(c.ref.kind) ?? []), c]);
    return byKind;
  };
  const expectedCounts = count(reference);
  const duplicates = [...count(live)]
    .filter(([kind, now]) => now.length > (expectedCounts.get(kind)?.length ?? 0))
    .map(([kind, now]) => ({
      kind,
      reference: expectedCounts.get(kind)?.length ?? 0,
      now: now.length,
      names: now.map((c) => c.ref.name),
    }));
  return { missing, duplicates, diffs, children: live };
}

/**
 * Objects of `created` (the operator's creates) that are no longer the
 * same: gone from the live children the comparison found, or there under
 * the same name with another UID (deleted and recreated). An object whose
 * contract entry does not promise `uid` is `excused`, with why.
 */
export function identityLosses(
  created: readonly WriteEntry[],
  comparison: EndStateComparison,
  kinds: ObjectKinds,
): { losses: string[]; excused: string[] } {
  const losses: string[] = [];
  const excused: string[] = [];
  for (const entry of created) {
    if (entry.subresource || !entry.name || !entry.uid) continue;
    const live = comparison.children.find(
      (c) => c.resource === entry.resource && c.group === entry.group && c.ref.name === entry.name,
    );
    const problem = !live
      ? `${entry.resource}/${entry.name} (uid ${entry.uid}) is gone`
      : live.uid !== entry.uid
        ? `${entry.resource}/${entry.name} was recreated (uid ${entry.uid} -> ${live.uid})`
        : undefined;
    if (problem === undefined) continue;
    const why = kinds.withdrawn(entry, "uid");
    if (why) excused.push(`not counted: ${problem}: ${why}`);
    else losses.push(problem);
  }
  return { losses, excused };
}
