import type { ClockMark, WriteEntry } from "../proxy/write-log.js";

// Reading the marks clock-writes.ts puts on the writes the operator's clock made: attaching them,
// describing them, telling a tick's writes and its children's families apart. Pure.

/**
 * Whether a clock mark falls within the contract's horizon (clock.horizon):
 * what the clock made by then is in every life, compared like any write.
 */
export function withinHorizon(mark: ClockMark, horizonMs: number | undefined): boolean {
  return horizonMs !== undefined && mark.afterSampleMs !== undefined && mark.afterSampleMs <= horizonMs;
}

/**
 * The writes of `writes` that belong to a firing of the clock that created
 * something (one tick's work: its Job, the status that records it), and the
 * rest. A firing that only rewrote what exists (a heartbeat stamped into
 * status) is in the rest: whether such a write was needed is what the
 * status-stability checks judge, and a contract declares a heartbeat as
 * volatile.
 */
export function ticksApart<W extends WriteEntry>(writes: readonly W[]): { ticks: W[]; rest: W[] } {
  const creating = new Set(
    writes.filter((w) => w.effect === "created" && firingOf(w) !== undefined).map(firingOf),
  );
  const ticks = writes.filter((w) => creating.has(firingOf(w)));
  return { ticks, rest: writes.filter((w) => !ticks.includes(w)) };
}

/** The firing a write of the clock belongs to: the seq of the write that began its burst (undefined: not the clock's). */
export function firingOf(write: Pick<WriteEntry, "seq" | "clock">): number | undefined {
  return write.clock ? (write.clock.firing ?? write.seq) : undefined;
}

/** One object a write is about, across its writes: "group/resource/namespace/name". */
export function objectKey(w: {
  readonly group: string;
  readonly resource: string;
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
}): string {
  return `${w.group}/${w.resource}/${w.namespace ?? ""}/${w.name ?? ""}`;
}

/**
 * What a schedule puts at the end of a name: a tick's number or time (digits), a generateName
 * suffix (five lowercase letters and digits), a hash (eight or more hex digits). A word (`web`,
 * `migrate`) is a role, not a tick.
 */
const VARYING_PART = /^(\d+|[a-z0-9]{5}|[0-9a-f]{8,})$/;

/**
 * The family of an object the operator wrote: its kind and its name without
 * the last dash-separated part ("ConfigMap hello-tick-"), when that part is
 * one a schedule varies (VARYING_PART); undefined otherwise, so that a
 * child named for its role (`hello-web` beside `hello-1796610660`) is never
 * taken for a tick's.
 */
export function clockFamily(object: {
  readonly group: string;
  readonly resource: string;
  readonly name?: string | undefined;
}): string | undefined {
  const name = object.name ?? "";
  const dash = name.lastIndexOf("-");
  if (dash <= 0 || !VARYING_PART.test(name.slice(dash + 1))) return undefined;
  return `${object.group}/${object.resource}/${name.slice(0, dash + 1)}`;
}

/**
 * The families (clockFamily) of the objects the clock created in these
 * writes. A tick that came while the operator was busy with other news is
 * not told apart by itself; one of the same family that another tick made
 * shows what it is.
 */
export function clockFamilies(writes: readonly WriteEntry[]): Set<string> {
  const families = new Set<string>();
  for (const w of writes) {
    const family = w.clock && w.effect === "created" ? clockFamily(w) : undefined;
    if (family) families.add(family);
  }
  return families;
}

/** The writes with their clock marks attached (a write the clock did not make is returned as it is). */
export function withClockMarks<W extends WriteEntry>(
  writes: readonly W[],
  marks: ReadonlyMap<number, ClockMark>,
): W[] {
  return writes.map((w) => {
    const clock = marks.get(w.seq);
    return clock ? { ...w, clock } : w;
  });
}

/** "write 12 at 11:40:02.125, 5.1 s after the operator's last write (9), with a RequeueAfter pending (its queues)" */
export function describeClockWrite(write: Pick<WriteEntry, "seq" | "time" | "clock">): string {
  const mark = write.clock;
  if (!mark) return `write ${write.seq}`;
  const at = write.time.slice(11, 23);
  if (mark.firing !== undefined) {
    return `write ${write.seq} at ${at}, in the burst the operator's clock began with write ${mark.firing} (${mark.pending})`;
  }
  if (mark.catchUp) {
    return `write ${write.seq} at ${at}, after a restart (the killed process's last write: ${mark.quietSinceSeq}): ${mark.pending}${mark.by === "silence" ? " (without its queues: weaker evidence)" : ""}`;
  }
  return `write ${write.seq} at ${at}, ${(mark.afterMs / 1000).toFixed(1)} s after ${mark.since ?? `the operator's write ${mark.quietSinceSeq}`}, with nothing the kit did and no watch event of news since: ${mark.pending}${mark.by === "silence" ? " (told from silence alone: weaker evidence)" : ""}`;
}
