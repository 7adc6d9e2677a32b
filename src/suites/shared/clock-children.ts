import { clockFamilies, clockFamily, describeClockWrite } from "../../scenario/clock-marks.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import type { ChildRecord } from "../../scenario/reference-state.js";

// The children the operator's clock made, as the comparisons of two lives read them: a tick's child
// in one life is another tick's in the other (docs/operators-on-a-clock.md). Pure.

/** A child's family (clockFamily): its kind and its name without the part a schedule varies. */
export function childFamily(c: ChildRecord): string | undefined {
  return clockFamily({ group: c.group, resource: c.resource, name: c.ref.name });
}

/**
 * Both sides' children split into those the clock made (ChildRecord.madeByClock, or of a family
 * it made on either side or in this life's writes: a tick that came while the operator was busy
 * with other news) and the rest, with a note for each of the clock's.
 */
export function clockChildrenApart<L extends ChildRecord, R extends ChildRecord>(
  live: readonly L[],
  reference: readonly R[],
  writes: readonly WriteEntry[],
  {
    beyondReference = false,
    hasRole = () => false,
  }: {
    readonly beyondReference?: boolean;
    /** Whether the reference's roles name the child (a name with the life's UID in it has a role). */
    readonly hasRole?: (c: ChildRecord) => boolean;
  } = {},
): {
  readonly live: L[];
  readonly reference: R[];
  readonly liveByClock: L[];
  readonly referenceByClock: R[];
  readonly notes: string[];
} {
  const families = new Set([
    ...[...live, ...reference].flatMap((c) => (c.madeByClock ? [childFamily(c) ?? ""] : [])),
    // What this life's clock made before, gone since or not: its family is the clock's.
    ...clockFamilies(writes),
  ]);
  const byClock = (c: ChildRecord) => c.madeByClock !== undefined || families.has(childFamily(c) ?? "");
  // A tick that fell due in a longer life, inside a reconcile that answered other news: of a family
  // the reference, which ended with the clock's work still pending, never had.
  const referenceFamilies = new Set(reference.map((c) => childFamily(c) ?? ""));
  const beyond = (c: ChildRecord) => {
    const family = childFamily(c);
    return (
      beyondReference && !byClock(c) && !hasRole(c) && family !== undefined && !referenceFamilies.has(family)
    );
  };
  const liveBeyond = live.filter(beyond);
  const liveByClock = live.filter(byClock);
  const referenceByClock = reference.filter(byClock);
  return {
    live: live.filter((c) => !byClock(c) && !beyond(c)),
    reference: reference.filter((c) => !byClock(c)),
    liveByClock,
    referenceByClock,
    notes: [
      ...liveByClock.map((c) => clockNote(c, "here")),
      ...referenceByClock.map((c) => clockNote(c, "in the reference")),
      ...liveBeyond.map(
        (c) =>
          `not compared: ${c.ref.kind}/${c.ref.name} (here) is of a family the reference has none of (${c.ref.kind} ${(childFamily(c) ?? "").split("/").at(-1) ?? ""}*), and the reference ended with the operator's delayed requeue still pending: a tick that fell due in this longer life, which the reference did not live to see (a clock horizon, clock.horizon, lets every life wait for it and compares such children)`,
      ),
    ],
  };
}

function clockNote(c: ChildRecord, where: string): string {
  const made = c.madeByClock
    ? `was made by the operator's clock, ${describeClockWrite(c.madeByClock)}`
    : `is of a family its clock made (${c.ref.kind} ${(childFamily(c) ?? "").split("/").at(-1) ?? ""}*)`;
  return `not compared field by field: ${c.ref.kind}/${c.ref.name} (${where}) ${made}`;
}

/**
 * The children the clock made on each side, counted per family (clockFamily):
 * more here than in the reference is a duplicate (a tick run twice), fewer a
 * tick lost. Within a clock horizon every life holds the ticks due by then.
 */
export function countByFamily(
  live: readonly ChildRecord[],
  reference: readonly ChildRecord[],
): {
  readonly missing: string[];
  readonly duplicates: { kind: string; reference: number; now: number; names: string[] }[];
} {
  const families = new Map<string, { kind: string; live: ChildRecord[]; reference: ChildRecord[] }>();
  const add = (c: ChildRecord, side: "live" | "reference") => {
    const family = childFamily(c) ?? `${c.group}/${c.resource}/${c.ref.name}`;
    const entry = families.get(family) ?? { kind: c.ref.kind, live: [], reference: [] };
    entry[side].push(c);
    families.set(family, entry);
  };
  for (const c of live) add(c, "live");
  for (const c of reference) add(c, "reference");
  const missing: string[] = [];
  const duplicates: { kind: string; reference: number; now: number; names: string[] }[] = [];
  for (const [family, { kind, live: here, reference: there }] of families) {
    const prefix = family.split("/").at(-1) ?? "";
    if (here.length > there.length) {
      duplicates.push({
        kind: `clock-made ${kind}`,
        reference: there.length,
        now: here.length,
        names: here.map((c) => c.ref.name),
      });
    } else if (here.length < there.length) {
      missing.push(
        `${there.length - here.length} clock-made ${kind}(s) of ${prefix}* (${there.map((c) => c.ref.name).join(", ")} in the reference, ${here.map((c) => c.ref.name).join(", ") || "none"} here, within the clock horizon)`,
      );
    }
  }
  return { missing, duplicates };
}
