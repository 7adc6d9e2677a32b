import parsePrometheusTextFormat from "parse-prometheus-text-format";

/**
 * One scrape of an operator's metrics endpoint, reduced to what says
 * whether it has work: controller-runtime's and client-go's workqueue
 * metrics (one queue per controller, labelled `name`), and
 * controller-runtime's reconcile metrics (labelled `controller`). Pure.
 */
export interface QueueReading {
  /** When it was read (the run's clock). */
  readonly at: number;
  /** Which start of the operator it came from (counters restart with the process). */
  readonly run: number;
  /** Why there is no reading (the endpoint refused, timed out, answered garbage); the rest is empty. */
  readonly error?: string;
  /** Per work queue (its `name` label): items waiting, and items ever added. */
  readonly queues: Readonly<Record<string, { readonly depth: number; readonly adds: number }>>;
  /** Per controller: reconciles running now (controller_runtime_active_workers); absent when not published. */
  readonly activeWorkers?: Readonly<Record<string, number>>;
  /** Reconciles finished, by result (success, error, requeue, requeue_after), summed over controllers. */
  readonly reconciles: Readonly<Record<string, number>>;
  /** Rate-limited re-adds (workqueue_retries_total), summed over queues. */
  readonly retries: number;
}

/** Reads the text format into a QueueReading; throws on text the parser cannot read. */
export function readQueueMetrics(text: string, at: number, run: number): QueueReading {
  const families = new Map(parsePrometheusTextFormat(text).map((family) => [family.name, family]));
  const samples = (name: string) =>
    (families.get(name)?.metrics ?? []).map((sample) => ({
      labels: sample.labels ?? {},
      value: Number(sample.value),
    }));
  const queues: Record<string, { depth: number; adds: number }> = {};
  const queue = (name: string) => (queues[name] ??= { depth: 0, adds: 0 });
  // Summed per queue: controller-runtime's priority queue reports its depth by priority too.
  for (const { labels, value } of samples("workqueue_depth")) queue(labels.name ?? "").depth += value;
  for (const { labels, value } of samples("workqueue_adds_total")) queue(labels.name ?? "").adds += value;
  const reconciles: Record<string, number> = {};
  for (const { labels, value } of samples("controller_runtime_reconcile_total")) {
    const result = labels.result ?? "";
    reconciles[result] = (reconciles[result] ?? 0) + value;
  }
  const retries = samples("workqueue_retries_total").reduce((sum, s) => sum + s.value, 0);
  const active = families.has("controller_runtime_active_workers")
    ? Object.fromEntries(
        samples("controller_runtime_active_workers").map((s) => [s.labels.controller ?? "", s.value]),
      )
    : undefined;
  return { at, run, queues, reconciles, retries, ...(active ? { activeWorkers: active } : {}) };
}

/** A reading that could not be taken. */
export function failedReading(at: number, run: number, error: string): QueueReading {
  return { at, run, error, queues: {}, reconciles: {}, retries: 0 };
}
