/**
 * The one rule by which every wait of a scenario (convergence, a fault
 * taking effect, a drift repair, a pre-existing child, a spec update
 * followed) decides that the operator is done. Two kinds of evidence:
 *
 * - queues: the operator's own work queues (its metrics endpoint) are
 *   empty and no reconcile is running, in readings taken after its last
 *   write and after the last watch event the proxy delivered to it, with
 *   no change between them; then a short settle of silence (what queues
 *   cannot show) is enough;
 * - silence: it has been silent (no write completed, none in flight) for
 *   the quiet period, counted from the last stimulus, so that a restarted
 *   operator or a touched object always gets the whole period to react.
 *
 * Silence is the fallback, and alone decides for an operator without
 * metrics (as it always did). Pure.
 */
import type { QueueReading } from "../operator/metrics/queue-readings.js";

/** How long an operator has been silent, and how long since the kit last gave it a reason to act. */
export interface Silence {
  /** Since its last write completed; 0 while one is in flight. */
  readonly operatorIdleMs: number;
  /** Since the wait's stimulus (a create, an update, a touch, a perturbation, a restart). */
  readonly sinceStimulusMs: number;
  /** What the operator's work queues say, when it publishes them (queueEvidence); absent: silence alone decides. */
  readonly queues?: QueueEvidence;
}

/** The verdict of the operator's work queues on whether it is done. */
export interface QueueEvidence {
  readonly done: boolean;
  /** Why (or why not), for the wait's progress and the verdict's evidence. */
  readonly reason: string;
  /** How long the operator must be silent once the queues say done. */
  readonly settleMs: number;
}

/** Which evidence decided that the operator is done. */
export type QuietBy = "queues" | "silence";

/**
 * How long an operator that has not reacted to a change may stay silent
 * before the kit concludes it is not going to: an operator that watches the
 * object reacts at once (one that repairs only on a periodic resync is
 * judged by what it did within this time).
 */
export const GIVE_UP_IDLE_MS = 10_000;

/** How long the operator has been silent since the stimulus. */
export function silentFor(silence: Silence): number {
  return Math.max(0, Math.min(silence.operatorIdleMs, silence.sinceStimulusMs));
}

/**
 * Which evidence says the operator is done, or undefined while none does:
 * its queues (done, and silent for their settle), else silence for the
 * quiet period. Queues that show work do not stop silence from deciding:
 * they are process-wide, and a cluster-wide operator works for other
 * scenarios too; silence decides exactly as without metrics.
 */
export function quietBy(silence: Silence, quietPeriodMs: number): QuietBy | undefined {
  const silent = silentFor(silence);
  if (silence.queues?.done && silent >= silence.queues.settleMs) return "queues";
  return silent >= quietPeriodMs ? "silence" : undefined;
}

/** Whether the operator is done, by either evidence (quietBy). */
export function isQuiet(silence: Silence, quietPeriodMs: number): boolean {
  return quietBy(silence, quietPeriodMs) !== undefined;
}

/**
 * How long after the proxy delivered a watch event a reading may first
 * count: the time an operator's informer takes to hand the event to its
 * queue (in-process, well under this).
 */
export const DELIVERY_HANDOFF_MS = 50;

/** The shortest span two readings must cover to show that nothing changed between them. */
export const QUEUE_WINDOW_MS = 100;

/** What the proxy knows that the queues must be read after. */
export interface QueueWindow {
  /** The wait's stimulus. */
  readonly stimulusAt: number;
  /** When the operator's last write arrived or completed; undefined for none. */
  readonly lastWriteAt?: number;
  /** When the proxy last delivered a watch event to the operator; undefined for none. */
  readonly lastDeliveryAt?: number;
  /**
   * The kit's last write, when the operator watches its kind and no watch
   * event has shown it that write yet: until one has, empty queues may only
   * mean the news has not arrived.
   */
  readonly undelivered?: string;
}

/**
 * Whether the operator's work queues say it is done: readings (oldest
 * first, of its current run) from after the stimulus, its last write and
 * the last watch event delivered to it, spanning QUEUE_WINDOW_MS, in which
 * every queue is empty, no reconcile runs (controller_runtime_active_workers)
 * and no counter moved (nothing added, nothing reconciled); the current run
 * has reconciled at least once, the operator's watch has shown it the
 * kit's last write, and its last reconciles (the last change of its
 * reconcile counters) did not end in an error or a requeue: a delayed
 * retry or RequeueAfter sits outside the queue's depth until it fires, so
 * then only silence can tell. (A success after a RequeueAfter clears it in
 * controller-runtime's priority queue, its default; a legacy delaying
 * queue may still fire the old timer for a reconcile with nothing to do.) Pure.
 */
export function queueEvidence(
  readings: readonly QueueReading[],
  window: QueueWindow,
  settleMs: number,
): QueueEvidence {
  const evidence = (done: boolean, reason: string): QueueEvidence => ({ done, reason, settleMs });
  const latest = readings.at(-1);
  if (latest === undefined) return evidence(false, "no reading of the metrics endpoint yet");
  if (latest.error !== undefined) return evidence(false, `metrics endpoint: ${latest.error}`);
  if (latest.activeWorkers === undefined) {
    return evidence(
      false,
      "the metrics publish no controller_runtime_active_workers: a running reconcile cannot be told",
    );
  }
  if (Object.keys(latest.queues).length === 0)
    return evidence(false, "the metrics publish no work queue yet");
  if (window.undelivered !== undefined) {
    return evidence(false, `no watch event has shown the operator ${window.undelivered} yet`);
  }
  const run = readings.filter((r) => r.run === latest.run);
  if (reconciled(latest) === 0)
    return evidence(false, "the operator has not reconciled anything since it started");
  const pending = requeuedLast(run);
  if (pending > 0) {
    return evidence(
      false,
      `the operator's last reconcile(s) ended in an error or asked to be requeued (${pending}): a delayed retry or RequeueAfter is outside the queues' depth until it fires`,
    );
  }
  const notBefore = Math.max(
    window.stimulusAt,
    window.lastWriteAt ?? -Infinity,
    (window.lastDeliveryAt ?? -Infinity) + DELIVERY_HANDOFF_MS,
  );
  const span = run.filter((r) => r.at >= notBefore);
  const first = span[0];
  if (first === undefined || latest.at - first.at < QUEUE_WINDOW_MS) {
    return evidence(false, "no readings yet over a window after the last watch event and write");
  }
  const busy = span.find((r) => r.error !== undefined || !idle(r));
  if (busy) return evidence(false, `work in the queues: ${describeWork(busy)}`);
  if (adds(first) !== adds(latest) || reconciled(first) !== reconciled(latest)) {
    return evidence(false, "the queues moved between readings");
  }
  return evidence(
    true,
    `every work queue empty and no reconcile running over ${latest.at - first.at} ms after the last watch event and write`,
  );
}

/**
 * How many of the reconciles in the last change of the run's reconcile
 * counters (a run starts from zero) ended in an error or a requeue.
 */
function requeuedLast(run: readonly QueueReading[]): number {
  const ok = run.filter((r) => r.error === undefined);
  let pending = 0;
  ok.forEach((after, i) => {
    const before = ok[i - 1];
    if (reconciled(after) !== (before ? reconciled(before) : 0)) {
      pending = requeues(after) - (before ? requeues(before) : 0);
    }
  });
  return pending;
}

function idle(reading: QueueReading): boolean {
  return (
    Object.values(reading.queues).every((q) => q.depth === 0) &&
    Object.values(reading.activeWorkers ?? {}).every((n) => n === 0)
  );
}

function describeWork(reading: QueueReading): string {
  if (reading.error !== undefined) return reading.error;
  const waiting = Object.entries(reading.queues).filter(([, q]) => q.depth > 0);
  const running = Object.entries(reading.activeWorkers ?? {}).filter(([, n]) => n > 0);
  return [
    ...waiting.map(([name, q]) => `${q.depth} item(s) waiting in ${name || "a queue"}`),
    ...running.map(([name, n]) => `${n} reconcile(s) of ${name || "a controller"} running`),
  ].join(", ");
}

const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);
const adds = (r: QueueReading) => sum(Object.values(r.queues).map((q) => q.adds));
const reconciled = (r: QueueReading) => sum(Object.values(r.reconciles));
const requeues = (r: QueueReading) =>
  (r.reconciles.error ?? 0) + (r.reconciles.requeue ?? 0) + (r.reconciles.requeue_after ?? 0) + r.retries;

/** Whether an operator that has not done what the wait waits for has been silent so long it never will. */
export function hasGivenUp(silence: Silence, giveUpMs: number = GIVE_UP_IDLE_MS): boolean {
  return silentFor(silence) >= giveUpMs;
}

/** A watch event the proxy delivered to the operator, as far as `updateDelivered` reads it. */
export interface Delivery {
  readonly group: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly name: string;
  readonly resourceVersion: string;
}

/**
 * Whether the operator's watch has delivered the object at `resourceVersion`
 * (a spec update's) or later: it has had the chance to act on the update.
 * Resource versions are opaque, but the API server's are etcd revisions:
 * when both are decimal, a later one counts (a coalesced watch may skip the
 * update's own event); otherwise only the same one does. Pure.
 */
export function updateDelivered(
  deliveries: readonly Delivery[],
  object: UpdatedObject,
  resourceVersion: string,
): boolean {
  return deliveries.some(
    (e) =>
      e.group === object.group &&
      e.resource === object.resource &&
      e.namespace === object.namespace &&
      e.name === object.name &&
      atLeast(e.resourceVersion, resourceVersion),
  );
}

/** The custom resource a spec update wrote. */
export interface UpdatedObject {
  readonly group: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly name: string;
}

/** An operator read through the proxy, as far as `updateRead` reads it (a ReadEntry). */
export interface Read {
  readonly verb: "get" | "list" | "watch";
  readonly group: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly resourceVersion?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly code: number;
}

/**
 * Whether the operator read the updated object by a get or a list that
 * began after the update was answered (`reads`: only those) and must have
 * seen it: the other way an operator learns of an update (a relist after
 * its watch ended, a direct get). Only a read that shows the latest state
 * counts: one without a resourceVersion (consistent), or from one at least
 * the update's; a read from "0" (any cached state) or a filtered list may
 * not have shown it. Pure.
 */
export function updateRead(reads: readonly Read[], object: UpdatedObject, resourceVersion: string): boolean {
  return reads.some(
    (r) =>
      (r.verb === "get" || r.verb === "list") &&
      r.code >= 200 &&
      r.code < 300 &&
      r.group === object.group &&
      r.resource === object.resource &&
      (r.namespace === undefined || r.namespace === object.namespace) &&
      (r.name === undefined || r.name === object.name) &&
      (r.verb === "get" || (r.labelSelector === undefined && r.fieldSelector === undefined)) &&
      (r.resourceVersion === undefined ||
        r.resourceVersion === "" ||
        (r.resourceVersion !== "0" && atLeast(r.resourceVersion, resourceVersion))),
  );
}

/** Whether resourceVersion `seen` is `wanted` or later (comparable only when both are decimal etcd revisions). */
function atLeast(seen: string, wanted: string): boolean {
  const decimal = /^\d+$/;
  return seen === wanted || (decimal.test(seen) && decimal.test(wanted) && BigInt(seen) >= BigInt(wanted));
}

/** One wait's decision, as ScenarioQuiescence.quietBy keeps it. */
export interface QuietDecision {
  readonly by: QuietBy;
  /** Why the queues could not tell, when silence decided for an operator that publishes them. */
  readonly queues?: string;
}

/**
 * The evidence line of a scenario's waits: how many each evidence decided,
 * and (the first) why the queues could not tell where silence decided.
 * Undefined when no wait decided. Pure.
 */
export function describeQuietDecisions(
  decisions: readonly QuietDecision[],
  quietPeriodMs: number,
): string | undefined {
  if (decisions.length === 0) return undefined;
  const byQueues = decisions.filter((d) => d.by === "queues").length;
  const bySilence = decisions.filter((d) => d.by === "silence");
  const parts: string[] = [];
  if (byQueues > 0) parts.push(`${byQueues} by the operator's work queues (empty, no reconcile running)`);
  if (bySilence.length > 0) {
    const why = bySilence.find((d) => d.queues !== undefined)?.queues;
    parts.push(
      `${bySilence.length} by silence (${quietPeriodMs / 1000} s with no operator write${why ? `; the queues could not tell: ${why}` : ""})`,
    );
  }
  return `quiescence: ${decisions.length} wait(s) decided, ${parts.join(", ")}`;
}
