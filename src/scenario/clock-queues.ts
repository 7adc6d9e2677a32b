import type { QueueReading } from "../operator/metrics/queue-readings.js";
import { QUEUE_WINDOW_MS } from "./quiescence.js";

// What an operator's work queues say of the time between two of its writes, for the rule of
// clock-writes.ts: whether it fell idle, and what its last reconcile left pending. Pure.

/** How the operator's last reconcile before a span ended, or `busy`: never idle in the span. */
export type QueuesSaid = "busy" | "requeue-after" | "retry" | "nothing-pending";

export function byRun(readings: readonly QueueReading[]): Map<number | undefined, QueueReading[]> {
  const runs = new Map<number | undefined, QueueReading[]>();
  for (const r of readings) {
    if (r.error !== undefined) continue;
    const list = runs.get(r.run) ?? [];
    list.push(r);
    runs.set(r.run, list);
  }
  return runs;
}

/** The index of the first element for which `after` holds, in a list where it holds from some point on. */
export function firstWhere<T>(list: readonly T[], after: (item: T) => boolean): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (after(list[middle] as T)) high = middle;
    else low = middle + 1;
  }
  return low;
}

/**
 * What the operator's queues said between its previous write and this one:
 * whether they fell idle (every queue empty, no reconcile running, over
 * QUEUE_WINDOW_MS at least) and, if so, how the last reconcile before the
 * last such window ended: asking for a delayed requeue, asking for a retry
 * (an error or a plain requeue), or with nothing pending. `busy`: never idle
 * in between (the write answers work that was going on). Undefined when the
 * readings do not cover the span (too few, or failed).
 */
export function queuesBetween(
  ofRun: readonly QueueReading[],
  from: number,
  to: number,
): { readonly kind: QueuesSaid } | undefined {
  const span = ofRun.slice(
    firstWhere(ofRun, (r) => r.at >= from),
    firstWhere(ofRun, (r) => r.at >= to),
  );
  const first = span[0];
  const last = span.at(-1);
  if (first === undefined || last === undefined || last.at - first.at < QUEUE_WINDOW_MS) return undefined;
  const window = lastIdleWindow(span);
  if (window === undefined) return { kind: "busy" };
  return {
    kind: lastReconcileEnded(
      ofRun.slice(
        0,
        firstWhere(ofRun, (r) => r.at > window.at),
      ),
    ),
  };
}

/**
 * How the last reconcile in `readings` (of one run, oldest first) ended, by
 * the last change of its reconcile counters: asking for a delayed requeue,
 * for a retry (an error or a plain requeue), or with nothing pending.
 */
export function lastReconcileEnded(
  readings: readonly QueueReading[],
): "requeue-after" | "retry" | "nothing-pending" {
  let ended: Exclude<QueuesSaid, "busy"> = "nothing-pending";
  readings.forEach((after, i) => {
    const before = readings[i - 1];
    const moved = (result: string) => (after.reconciles[result] ?? 0) - (before?.reconciles[result] ?? 0);
    const retried = after.retries - (before?.retries ?? 0);
    const total = Object.keys(after.reconciles).reduce((n, result) => n + moved(result), 0);
    if (total === 0 && retried === 0) return;
    // controller-runtime's priority queue (its default) counts every delayed add as a retry,
    // a RequeueAfter's included: the reconcile's own result says which it was.
    if (moved("error") > 0 || moved("requeue") > 0) ended = "retry";
    else if (moved("requeue_after") > 0) ended = "requeue-after";
    else if (retried > 0) ended = "retry";
    else ended = "nothing-pending";
  });
  return ended;
}

/**
 * Whether the operator's current run ended its last reconcile asking for a
 * delayed requeue (RequeueAfter): work its clock will bring later, which a
 * life that stops at convergence never sees. False without readings.
 */
export function delayedRequeuePending(readings: readonly QueueReading[]): boolean {
  const run = readings.at(-1)?.run;
  return (
    lastReconcileEnded(readings.filter((r) => r.run === run && r.error === undefined)) === "requeue-after"
  );
}

/** The last reading of the last run of idle readings spanning QUEUE_WINDOW_MS; undefined when there is none. */
function lastIdleWindow(span: readonly QueueReading[]): QueueReading | undefined {
  const idle = (r: QueueReading) =>
    Object.values(r.queues).every((q) => q.depth === 0) &&
    Object.values(r.activeWorkers ?? {}).every((n) => n === 0);
  let found: QueueReading | undefined;
  let start: QueueReading | undefined;
  for (const r of span) {
    if (!idle(r)) {
      start = undefined;
      continue;
    }
    start ??= r;
    if (r.at - start.at >= QUEUE_WINDOW_MS) found = r;
  }
  return found;
}
