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

/** The metric families a reading uses; every other family on the endpoint is left unparsed. */
export const READ_FAMILIES: ReadonlySet<string> = new Set([
  "workqueue_depth",
  "workqueue_adds_total",
  "workqueue_retries_total",
  "controller_runtime_reconcile_total",
  "controller_runtime_active_workers",
]);

/**
 * The lines of the text format that belong to READ_FAMILIES: their
 * `# HELP` and `# TYPE` lines and their samples. An endpoint publishes
 * hundreds of families (Go runtime, process, REST client, histograms of
 * every kind) and is read ten times a second per operator: parsing only
 * these five cut most of the parser's time out of a run's profile. None of
 * the five is a histogram or summary, so a sample's name is its family's.
 */
export function readFamilyLines(text: string): string {
  const kept: string[] = [];
  for (const line of text.split("\n")) {
    const name = line.startsWith("# ") ? line.split(" ", 3)[2] : /^[^{\s]*/.exec(line)?.[0];
    if (name !== undefined && READ_FAMILIES.has(name)) kept.push(line);
  }
  // Each line ends in a newline, the last too: the parser drops a last line without one.
  return kept.map((line) => `${line}\n`).join("");
}

/** Reads the text format into a QueueReading; throws on text the parser cannot read. */
export function readQueueMetrics(text: string, at: number, run: number): QueueReading {
  const families = new Map(
    parsePrometheusTextFormat(readFamilyLines(text)).map((family) => [family.name, family]),
  );
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
