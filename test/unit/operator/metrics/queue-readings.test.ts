import { readFileSync } from "node:fs";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { describe, expect, it } from "vitest";
import {
  failedReading,
  READ_FAMILIES,
  readFamilyLines,
  readQueueMetrics,
} from "../../../../src/operator/metrics/queue-readings.js";

// A whole scrape of the example operator's endpoint (controller-runtime v0.25, mid-run): 168 families.
const WHOLE_SCRAPE = readFileSync(
  new URL("../../../fixtures/metrics/webapp-operator-scrape.txt", import.meta.url),
  "utf8",
);

// A scrape of controller-runtime v0.25's metrics endpoint, cut to the families the reading uses and a
// few it must ignore; the priority queue reports depth per priority, which the reading sums per queue.
const SCRAPE = `# HELP controller_runtime_active_workers Number of currently used workers per controller
# TYPE controller_runtime_active_workers gauge
controller_runtime_active_workers{controller="webapp"} 1
# HELP controller_runtime_reconcile_total Total number of reconciliations per controller
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="webapp",result="error"} 2
controller_runtime_reconcile_total{controller="webapp",result="requeue"} 0
controller_runtime_reconcile_total{controller="webapp",result="requeue_after"} 1
controller_runtime_reconcile_total{controller="webapp",result="success"} 9
# HELP workqueue_adds_total Total number of adds handled by workqueue
# TYPE workqueue_adds_total counter
workqueue_adds_total{controller="webapp",name="webapp"} 12
# HELP workqueue_depth Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{controller="webapp",name="webapp",priority="0"} 2
workqueue_depth{controller="webapp",name="webapp",priority="-100"} 1
# HELP workqueue_retries_total Total number of retries handled by workqueue
# TYPE workqueue_retries_total counter
workqueue_retries_total{controller="webapp",name="webapp"} 2
# HELP workqueue_work_duration_seconds How long in seconds processing an item from workqueue takes.
# TYPE workqueue_work_duration_seconds histogram
workqueue_work_duration_seconds_bucket{controller="webapp",name="webapp",le="0.001"} 3
workqueue_work_duration_seconds_bucket{controller="webapp",name="webapp",le="+Inf"} 12
workqueue_work_duration_seconds_sum{controller="webapp",name="webapp"} 0.05
workqueue_work_duration_seconds_count{controller="webapp",name="webapp"} 12
# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 42
`;

describe("readQueueMetrics", () => {
  it("reads queues, running reconciles, results and retries from controller-runtime's families", () => {
    expect(readQueueMetrics(SCRAPE, 1_000, 2)).toEqual({
      at: 1_000,
      run: 2,
      queues: { webapp: { depth: 3, adds: 12 } },
      activeWorkers: { webapp: 1 },
      reconciles: { error: 2, requeue: 0, requeue_after: 1, success: 9 },
      retries: 2,
    });
  });

  it("has no activeWorkers where only client-go's workqueue metrics are published", () => {
    const clientGo = `# TYPE workqueue_depth gauge
workqueue_depth{name="Foos"} 0
# TYPE workqueue_adds_total counter
workqueue_adds_total{name="Foos"} 4
`;
    const reading = readQueueMetrics(clientGo, 5, 1);
    expect(reading.activeWorkers).toBeUndefined();
    expect(reading.queues).toEqual({ Foos: { depth: 0, adds: 4 } });
    expect(reading.reconciles).toEqual({});
  });

  it("reads an endpoint with none of the families as no queue at all", () => {
    expect(readQueueMetrics("# TYPE go_goroutines gauge\ngo_goroutines 7\n", 5, 1)).toEqual({
      at: 5,
      run: 1,
      queues: {},
      reconciles: {},
      retries: 0,
    });
  });

  it("keeps why a reading failed", () => {
    expect(failedReading(9, 1, "connection refused")).toMatchObject({
      error: "connection refused",
      queues: {},
    });
  });
});

describe("readFamilyLines", () => {
  it("keeps exactly the families a reading uses: parsed alone they equal the same families of the whole scrape", () => {
    const whole = parsePrometheusTextFormat(WHOLE_SCRAPE);
    expect(whole.length).toBeGreaterThan(100);
    const kept = readFamilyLines(WHOLE_SCRAPE);
    expect(kept.split("\n").length).toBeLessThan(WHOLE_SCRAPE.split("\n").length / 10);
    const expected = whole.filter((family) => READ_FAMILIES.has(family.name));
    expect(expected.map((f) => f.name).sort()).toEqual([...READ_FAMILIES].sort());
    expect(parsePrometheusTextFormat(kept)).toEqual(expected);
  });

  it("drops a family whose name only begins like a read one, and keeps labels with spaces and braces", () => {
    const text = `# TYPE workqueue_depth_seconds gauge
workqueue_depth_seconds{name="a"} 9
# TYPE workqueue_depth gauge
workqueue_depth{name="odd { name }"} 2
`;
    expect(readFamilyLines(text)).toBe(
      `# TYPE workqueue_depth gauge\nworkqueue_depth{name="odd { name }"} 2\n`,
    );
    expect(readQueueMetrics(text, 0, 1).queues).toEqual({ "odd { name }": { depth: 2, adds: 0 } });
  });
});
