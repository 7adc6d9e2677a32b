import { normalisedName } from "../../proxy/faults.js";
import { clockFamilies, clockFamily, describeClockWrite, objectKey } from "../../scenario/clock-marks.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import { roleOf, type ChildRoles } from "../../scenario/child-roles.js";
import type { ChildRecord } from "../../scenario/reference-state.js";

// The children the operator's clock made, as the comparisons of two lives read them: a tick's child
// in one life is another tick's in the other (docs/operators-on-a-clock.md). Pure.

/** A child's family (clockFamily): its kind and its name without the part a schedule varies. */
export function childFamily(c: ChildRecord): string | undefined {
  return clockFamily({ group: c.group, resource: c.resource, name: c.ref.name });
}

/**
 * Whether a child is named as a schedule's tick is: its name's last part is
 * one a schedule varies (clockFamily), and no role the reference lives
 * learned names it for the life (registration-<uid> varies with the life,
 * not with the time). Without a clock horizon, while the reference ended
 * with the operator's delayed requeue pending, such a child may be a tick
 * that fell due inside other work, which nothing tells from an answer.
 */
export function namedLikeATick(
  c: { readonly group: string; readonly resource: string; readonly name: string; readonly kind?: string },
  roles: ChildRoles | undefined,
): boolean {
  // A UID in the name is the life's, not the time's: registration-<uid> is no tick.
  const name = normalisedName({ name: c.name });
  if (clockFamily({ group: c.group, resource: c.resource, name }) === undefined) return false;
  const kind = c.kind ?? roles?.roles.find((r) => r.group === c.group && r.resource === c.resource)?.kind;
  if (kind === undefined) return true;
  const m = roleOf(roles, kind, c.name);
  return !(m.status === "role" && m.role.template !== undefined);
}

/** namedLikeATick for a child as a comparison holds it. */
export function childNamedLikeATick(c: ChildRecord, roles: ChildRoles | undefined): boolean {
  return namedLikeATick({ group: c.group, resource: c.resource, name: c.ref.name, kind: c.ref.kind }, roles);
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

/**
 * Without a clock horizon, when the operator had a delayed requeue pending
 * (`pending`): the writes that created an object named as a tick is
 * (namedLikeATick), no clock mark on them, and the later writes of those
 * objects, apart from the rest. Such a create may be a tick that fell due
 * inside a reconcile that answered other news, which nothing tells from an
 * answer; a check that would count it says it cannot judge it. Pure.
 */
export function maybeTicksApart<W extends WriteEntry>(
  writes: readonly W[],
  pending: boolean,
): { readonly maybeTicks: W[]; readonly rest: W[] } {
  if (!pending) return { maybeTicks: [], rest: [...writes] };
  const made = new Set(
    writes
      .filter(
        (w) =>
          w.effect === "created" &&
          !w.clock &&
          w.name !== undefined &&
          !w.generateName &&
          namedLikeATick({ group: w.group, resource: w.resource, name: w.name }, undefined),
      )
      .map(objectKey),
  );
  const maybeTicks = writes.filter((w) => made.has(objectKey(w)));
  return { maybeTicks, rest: writes.filter((w) => !made.has(objectKey(w))) };
}

/** The note of a write maybeTicksApart set apart. */
export function maybeTickNote(w: WriteEntry): string {
  return `not judged: #${w.seq} ${w.verb} ${w.resource}/${w.name ?? ""}: named as a schedule's tick is, while the operator had a delayed requeue pending and no clock horizon is set: a tick that fell due inside this reconcile cannot be told from an answer (clock.horizon lets every life wait for the ticks)`;
}
