/**
 * Writes the clock made. Every oracle of the kit reads what the operator
 * writes as its answer to what the kit did (a create, an update, a fault, a
 * restart) or to what it was shown (a watch event). An operator may also act
 * on its own clock: a schedule (a Job at each minute boundary), a heartbeat,
 * a periodic resync, a certificate renewal, a rate-limited retry. Such a
 * write answers nothing the kit did, and a comparison of two lives that read
 * it as an answer blames the path or the fault for the time of day.
 *
 * A write is told time-driven when, since the operator's previous write
 * (when it fell quiet), in the same run of its process:
 * - that previous write succeeded (a write after a failure is its retry:
 *   an answer to the failure, which may be the kit's fault);
 * - the kit wrote nothing through the proxy, and restarted nothing (a
 *   restart is a new run);
 * - the proxy delivered no watch event to it but the echoes of its own
 *   writes (an event of another writer's change, a built-in controller's
 *   included, is news it may answer);
 * and it was quiet, as its work queues show it (every queue empty, no
 * reconcile running, its last reconcile asked for a delayed requeue) or,
 * without them, as silence alone shows it: no write for the quiet period.
 * The mark says which evidence told it and what was pending; silence is
 * the weaker evidence, and the mark says so. Pure.
 */

import type { QueueReading } from "../operator/metrics/queue-readings.js";
import type { DeliveredEvent } from "../proxy/read-log.js";
import type { ClockMark, WriteEntry } from "../proxy/write-log.js";
import { objectKey } from "./clock-marks.js";
import { byRun, firstWhere, lastReconcileEnded, queuesBetween } from "./clock-queues.js";
import { DELIVERY_HANDOFF_MS } from "./quiescence.js";

export type { ClockMark } from "../proxy/write-log.js";

/** What a scenario knows of its operator's activity, in its own order. */
export interface ActivityRecord {
  /** Every write of the scenario's proxy (the operator's and the kit's), in seq order. */
  readonly writes: readonly WriteEntry[];
  /** The watch events the proxy delivered to the operator. */
  readonly deliveries: readonly DeliveredEvent[];
  /** Its work queues' readings (oldest first); absent when it publishes none. */
  readonly readings?: readonly QueueReading[] | undefined;
  /** The contract's quiet period: how long silence alone must last. */
  readonly quietPeriodMs: number;
  /** When the kit created the custom resource in this life (the run's clock): marks say how long after. */
  readonly sampleCreatedAt?: number | undefined;
  /**
   * The contract's clock horizon: within it every life waits for the ticks,
   * so a create after a restart is never taken for a tick's catch-up there.
   */
  readonly horizonMs?: number | undefined;
}

/**
 * A scenario's clock marks, computed again only when a write was added: a
 * write's mark reads only what came before it (`record` reads the scenario
 * as it is now; `throughSeq` is its write log's last sequence number).
 */
export class ClockMarker {
  private cached: { readonly throughSeq: number; readonly marks: ReadonlyMap<number, ClockMark> } | undefined;

  constructor(private readonly record: () => ActivityRecord) {}

  marks(throughSeq: number): ReadonlyMap<number, ClockMark> {
    if (this.cached?.throughSeq !== throughSeq)
      this.cached = { throughSeq, marks: clockMarks(this.record()) };
    return this.cached.marks;
  }
}

/** The clock marks of a scenario's operator writes, by seq: only the writes the clock made have one. */
export function clockMarks(record: ActivityRecord): Map<number, ClockMark> {
  const marks = new Map<number, ClockMark>();
  const context: MarkContext = {
    record,
    echoes: ownEchoes(record.writes),
    readingsByRun: byRun(record.readings ?? []),
  };
  // The kinds each run's clock created (group/resource), and the restarted run's opening burst.
  const clockKinds = new Map<number | undefined, Set<string>>();
  let opening: { readonly killed: WriteEntry } | undefined;
  // The firing under way: the write that began it, its mark, the objects it wrote.
  let firing: Firing | undefined;
  let previous: WriteEntry | undefined;
  let lastKit: WriteEntry | undefined;
  let since = { kit: false, restarted: false };
  for (const write of record.writes) {
    if (write.actor === "kit") {
      since = { ...since, kit: true };
      opening = undefined;
      lastKit = write;
      continue;
    }
    // Events and Leases are the manager's bookkeeping: neither news nor an answer.
    if (write.tag !== undefined) continue;
    if (previous !== undefined && previous.run !== write.run) {
      since = { ...since, restarted: true };
      opening = since.kit ? undefined : { killed: previous };
    } else if (
      opening &&
      previous &&
      Date.parse(write.time) - Date.parse(previous.time) >= record.quietPeriodMs
    ) {
      opening = undefined;
    }
    const started =
      markOf(context, write, previous?.run === write.run ? previous : undefined, lastKit) ??
      (opening && catchUpOf(context, opening.killed, write, clockKinds.get(opening.killed.run)));
    if (started) firing = { first: write, mark: started, wrote: new Set() };
    const mark = started ?? (previous && firing && continues(context, firing, previous, write, since));
    if (!mark) firing = undefined;
    if (mark && firing) {
      marks.set(write.seq, mark);
      firing.wrote.add(objectKey(write));
      if (write.effect === "created") {
        const kinds = clockKinds.get(write.run) ?? new Set<string>();
        kinds.add(kindOf(write));
        clockKinds.set(write.run, kinds);
      }
    }
    previous = write;
    since = { kit: false, restarted: false };
  }
  return marks;
}

const kindOf = (w: Pick<WriteEntry, "group" | "resource">) => `${w.group}/${w.resource}`;

/** A burst of writes the clock began: one tick's work. */
interface Firing {
  readonly first: WriteEntry;
  readonly mark: ClockMark;
  /** The objects its writes wrote (objectKey): their watch events are the firing's own news. */
  readonly wrote: Set<string>;
}

/**
 * Whether `write` goes on with the firing under way: the same run, no kit
 * write, no pause of the quiet period, and no watch event since the previous
 * write but the echoes of the operator's writes and events of objects the
 * firing wrote (a Job it created, changed by the Job controller). Its mark is
 * the firing's first write's, naming that write.
 */
function continues(
  context: MarkContext,
  firing: Firing,
  previous: WriteEntry,
  write: WriteEntry,
  since: { readonly kit: boolean; readonly restarted: boolean },
): ClockMark | undefined {
  if (since.kit || since.restarted || previous.run !== write.run) return undefined;
  if (Date.parse(write.time) - Date.parse(previous.time) >= context.record.quietPeriodMs) return undefined;
  if (newsBetween(context, previous, write, (e) => firing.wrote.has(objectKey(e)))) return undefined;
  return { ...firing.mark, firing: firing.first.seq };
}

/**
 * Whether the proxy delivered the operator a watch event after `previous`
 * and before `write` that is news to it: not the echo of one of its own
 * writes, nor one `own` claims.
 */
function newsBetween(
  context: MarkContext,
  previous: WriteEntry,
  write: WriteEntry,
  own: (event: DeliveredEvent) => boolean = () => false,
): boolean {
  const { deliveries } = context.record;
  // Deliveries are recorded in order, so their beforeWriteSeq never decreases.
  for (let i = firstWhere(deliveries, (e) => e.beforeWriteSeq > previous.seq); i < deliveries.length; i++) {
    const e = deliveries[i] as DeliveredEvent;
    if (e.beforeWriteSeq > write.seq) break;
    if (e.run !== undefined && e.run !== write.run) continue;
    if (!isEcho(context, e) && !own(e)) return true;
  }
  return false;
}

/**
 * A create in a restarted process's first burst (no kit write since the
 * restart, no pause of the quiet period), of a kind the killed process's
 * clock had created, when the killed process had a delayed requeue pending
 * (its queues show it; without queues, its clock's creates are the only
 * evidence, weaker): a tick that came due while it was down. Never within
 * the clock horizon, where every life has the ticks; never a kind the clock
 * had not made in this life (a duplicate of an answer after a crash is the
 * crash suite's to find).
 */
function catchUpOf(
  context: MarkContext,
  killed: WriteEntry,
  write: WriteEntry,
  madeByClock: ReadonlySet<string> | undefined,
): ClockMark | undefined {
  const { record } = context;
  if (write.effect !== "created" || write.code < 200 || write.code >= 300) return undefined;
  if (!madeByClock?.has(kindOf(write))) return undefined;
  const at = Date.parse(write.time);
  const afterSampleMs = record.sampleCreatedAt === undefined ? undefined : at - record.sampleCreatedAt;
  if (record.horizonMs !== undefined && (afterSampleMs === undefined || afterSampleMs <= record.horizonMs)) {
    return undefined;
  }
  const readings = context.readingsByRun.get(killed.run);
  if (readings && readings.length > 0 && lastReconcileEnded(readings) !== "requeue-after") return undefined;
  return {
    quietSinceSeq: killed.seq,
    quietSince: killed.time,
    afterMs: at - Date.parse(killed.time),
    by: readings && readings.length > 0 ? "queues" : "silence",
    pending:
      "created as the restarted process's first answer, of a kind the killed process's clock had made, while it had a delayed requeue pending: a tick that came due while it was down",
    ...(afterSampleMs === undefined ? {} : { afterSampleMs }),
    catchUp: true,
  };
}

interface MarkContext {
  readonly record: ActivityRecord;
  readonly echoes: ReadonlySet<string>;
  /** The readings that could be taken, per run, oldest first. */
  readonly readingsByRun: ReadonlyMap<number | undefined, readonly QueueReading[]>;
}

/**
 * The mark of a write its clock made, or undefined: the operator fell quiet
 * after the last stimulus before it (its own previous write in this run, the
 * kit's last write, the last watch event of news delivered to this run) and
 * nothing came after, as its queues show (idle, a delayed requeue pending)
 * or silence for the quiet period. A write of a run with no such stimulus
 * yet answers its start; one after a failed write is that write's retry.
 */
function markOf(
  context: MarkContext,
  write: WriteEntry,
  previous: WriteEntry | undefined,
  lastKit: WriteEntry | undefined,
): ClockMark | undefined {
  const { record } = context;
  if (previous && (previous.code < 200 || previous.code >= 300)) return undefined;
  // A restarted run that has written nothing yet learns the world from its first watch events:
  // every one of them is news to it.
  const news = lastNews(context, write, previous === undefined);
  if (news === "unplaced") return undefined;
  const stimuli = [
    ...(previous ? [{ at: Date.parse(previous.time), what: `the operator's write ${previous.seq}` }] : []),
    ...(lastKit ? [{ at: Date.parse(lastKit.time), what: `the kit's write ${lastKit.seq}` }] : []),
    ...(news ? [news] : []),
  ];
  // A restarted run with no write and no news of its own yet: this write answers the restart.
  if (!previous && !news) return undefined;
  const anchor = stimuli.reduce((latest, s) => (s.at > latest.at ? s : latest));
  const at = Date.parse(write.time);
  const afterMs = at - anchor.at;
  const base = {
    quietSinceSeq: previous?.seq ?? lastKit?.seq ?? 0,
    quietSince: new Date(anchor.at).toISOString(),
    since: anchor.what,
    afterMs,
    ...(record.sampleCreatedAt === undefined ? {} : { afterSampleMs: at - record.sampleCreatedAt }),
  };
  const queues =
    record.readings &&
    queuesBetween(context.readingsByRun.get(write.run) ?? [], anchor.at + DELIVERY_HANDOFF_MS, at);
  if (queues?.kind === "requeue-after") {
    return {
      ...base,
      by: "queues",
      pending:
        "its last reconcile asked for a delayed requeue (RequeueAfter), and its queues were empty and idle since",
    };
  }
  if (queues?.kind === "busy") return undefined;
  if (afterMs < record.quietPeriodMs) return undefined;
  const pending =
    queues?.kind === "retry"
      ? "its last reconcile ended in an error or a requeue: a rate-limited retry"
      : queues?.kind === "nothing-pending"
        ? "its queues showed nothing pending: a timer of its own or a periodic resync"
        : record.readings
          ? "its queues could not tell what was pending"
          : "it publishes no work queues, so what was pending is not known";
  return { ...base, by: "silence", pending };
}

/**
 * The last watch event delivered to the write's run before it that is news
 * to the operator (not the echo of one of its own writes, unless
 * `echoesAreNews`): when and what; undefined for none; "unplaced" for one
 * recorded without its time.
 */
function lastNews(
  context: MarkContext,
  write: WriteEntry,
  echoesAreNews: boolean,
): { readonly at: number; readonly what: string } | "unplaced" | undefined {
  const { deliveries } = context.record;
  for (let i = firstWhere(deliveries, (e) => e.beforeWriteSeq > write.seq) - 1; i >= 0; i--) {
    const e = deliveries[i] as DeliveredEvent;
    if (e.run !== undefined && write.run !== undefined && e.run !== write.run) {
      // Deliveries of an earlier run come before this run's: none of this run is left.
      if (e.run < write.run) return undefined;
      continue;
    }
    if (!echoesAreNews && isEcho(context, e)) continue;
    if (e.at === undefined) return "unplaced";
    return {
      at: e.at,
      what: `the watch event of ${e.resource}/${e.name} (resourceVersion ${e.resourceVersion})`,
    };
  }
  return undefined;
}

function isEcho(context: MarkContext, e: DeliveredEvent): boolean {
  return (
    context.echoes.has(eventKey(e)) ||
    (e.type === "DELETED" && context.echoes.has(eventKey({ ...e, resourceVersion: DELETED })))
  );
}

/** The watch events that are the operator's own writes coming back: "group/resource/namespace/name@resourceVersion". */
function ownEchoes(writes: readonly WriteEntry[]): Set<string> {
  const echoes = new Set<string>();
  for (const w of writes) {
    if (w.actor !== "operator" || !w.name) continue;
    // Its delete comes back as the object's DELETED event, at a resourceVersion of the server's.
    if (w.verb === "delete" || w.verb === "deletecollection")
      echoes.add(eventKey({ ...w, name: w.name, resourceVersion: DELETED }));
    if (w.resourceVersion) echoes.add(eventKey({ ...w, name: w.name, resourceVersion: w.resourceVersion }));
  }
  return echoes;
}

const DELETED = "deleted";

function eventKey(e: {
  readonly group: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly name: string;
  readonly resourceVersion: string;
}): string {
  return `${e.group}/${e.resource}/${e.namespace ?? ""}/${e.name}@${e.resourceVersion}`;
}
