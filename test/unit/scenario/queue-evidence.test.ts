import { describe, expect, it } from "vitest";
import type { QueueReading } from "../../../src/operator/metrics/queue-readings.js";
import {
  DELIVERY_HANDOFF_MS,
  describeQuietDecisions,
  queueEvidence,
  quietBy,
  type QueueWindow,
} from "../../../src/scenario/quiescence.js";

// The queue half of the quiescence rule: when an operator's own work queues may say it is done, and
// that silence still decides whenever they cannot.

/** An idle reading of run 1: one empty queue, no reconcile running, 5 reconciles done, all successful. */
const idle = (at: number, changes: Partial<QueueReading> = {}): QueueReading => ({
  at,
  run: 1,
  queues: { webapp: { depth: 0, adds: 5 } },
  activeWorkers: { webapp: 0 },
  reconciles: { success: 5, error: 0, requeue: 0, requeue_after: 0 },
  retries: 0,
  ...changes,
});

/** Readings every 100 ms from `from` to `to`. */
const every100 = (from: number, to: number, make = idle): QueueReading[] => {
  const readings: QueueReading[] = [];
  for (let at = from; at <= to; at += 100) readings.push(make(at));
  return readings;
};

const window: QueueWindow = { stimulusAt: 1_000, lastWriteAt: 1_200, lastDeliveryAt: 1_250 };

describe("queueEvidence", () => {
  it("is done over a window of idle, unchanging readings after the last write and delivery", () => {
    const evidence = queueEvidence(every100(0, 1_500), window, 300);
    expect(evidence).toMatchObject({ done: true, settleMs: 300 });
    expect(evidence.reason).toMatch(/every work queue empty and no reconcile running over 200 ms/);
  });

  it.each<[string, readonly QueueReading[], QueueWindow, RegExp]>([
    ["no reading yet", [], window, /no reading of the metrics endpoint yet/],
    [
      "the endpoint refused its last reading",
      [...every100(0, 1_400), { ...idle(1_500), error: "connection refused" }],
      window,
      /metrics endpoint: connection refused/,
    ],
    [
      "only client-go's metrics: a running reconcile cannot be told",
      every100(0, 1_500, (at) => {
        const { activeWorkers: _none, ...reading } = idle(at);
        return reading;
      }),
      window,
      /no controller_runtime_active_workers/,
    ],
    [
      "no work queue published yet",
      every100(0, 1_500, (at) => idle(at, { queues: {} })),
      window,
      /no work queue yet/,
    ],
    [
      "the kit's last write not delivered yet",
      every100(0, 1_500),
      { ...window, undelivered: "the kit's update of webapps/hello (resourceVersion 9)" },
      /no watch event has shown the operator the kit's update of webapps\/hello/,
    ],
    [
      "nothing reconciled since the operator started",
      every100(0, 1_500, (at) => idle(at, { reconciles: {} })),
      window,
      /has not reconciled anything since it started/,
    ],
    [
      "the last reconcile asked for a requeue after a delay",
      [
        ...every100(0, 1_000),
        ...every100(1_100, 1_500, (at) => idle(at, { reconciles: { success: 5, requeue_after: 1 } })),
      ],
      window,
      /last reconcile\(s\) ended in an error or asked to be requeued \(1\): a delayed retry or RequeueAfter/,
    ],
    [
      "the last reconcile failed (a rate-limited retry)",
      [
        ...every100(0, 1_000),
        ...every100(1_100, 1_500, (at) => idle(at, { retries: 1, reconciles: { success: 5, error: 1 } })),
      ],
      window,
      /ended in an error or asked to be requeued \(2\)/,
    ],
    [
      "readings since the last delivery span less than the window",
      every100(0, 1_300),
      window,
      /no readings yet over a window/,
    ],
    [
      "an item waiting",
      [...every100(0, 1_400), idle(1_500, { queues: { webapp: { depth: 1, adds: 6 } } })],
      window,
      /work in the queues: 1 item\(s\) waiting in webapp/,
    ],
    [
      "a reconcile running",
      [...every100(0, 1_400), idle(1_500, { activeWorkers: { webapp: 1 } })],
      window,
      /1 reconcile\(s\) of webapp running/,
    ],
    [
      "an item added and reconciled between two idle readings",
      [
        ...every100(0, 1_400),
        idle(1_500, { queues: { webapp: { depth: 0, adds: 6 } }, reconciles: { success: 6 } }),
      ],
      window,
      /the queues moved between readings/,
    ],
  ])("is not done: %s", (_name, readings, w, reason) => {
    const evidence = queueEvidence(readings, w, 300);
    expect(evidence.done).toBe(false);
    expect(evidence.reason).toMatch(reason);
  });

  it("counts readings only from DELIVERY_HANDOFF_MS after the last delivered watch event", () => {
    // Delivered at 1 400: a reading at 1 420 may predate the operator's handing it to its queue.
    const late = { ...window, lastDeliveryAt: 1_400 };
    // Counted from 1 420, 1 420 to 1 520 would be window enough.
    expect(1_420).toBeLessThan(1_400 + DELIVERY_HANDOFF_MS);
    const readings = [...every100(0, 1_400), idle(1_420), idle(1_520)];
    expect(queueEvidence(readings, late, 300).done).toBe(false);
    const after = [...readings, idle(1_620)];
    expect(queueEvidence(after, late, 300).done).toBe(true);
  });

  it("takes a requeue followed by a successful reconcile for done: the success cleared it", () => {
    const requeued = (at: number) => idle(at, { reconciles: { success: 5, requeue_after: 1 } });
    const succeeded = (at: number) => idle(at, { reconciles: { success: 6, requeue_after: 1 } });
    expect(
      queueEvidence(
        [...every100(0, 900), ...every100(1_000, 1_100, requeued), ...every100(1_200, 1_500, succeeded)],
        window,
        300,
      ).done,
    ).toBe(true);
  });

  it("compares requeues within one run of the operator: a restart's counters start again", () => {
    // Run 1 had requeued before the restart (the stimulus at 1 000); run 2 has only successes.
    const before = every100(0, 900, (at) => idle(at, { reconciles: { success: 5, requeue_after: 3 } }));
    const after = every100(1_000, 1_500, (at) => idle(at, { run: 2, reconciles: { success: 1 } }));
    expect(queueEvidence([...before, ...after], window, 300).done).toBe(true);
  });
});

describe("quietBy", () => {
  const done = { done: true, reason: "empty", settleMs: 300 };
  it.each<[string, Parameters<typeof quietBy>[0], "queues" | "silence" | undefined]>([
    [
      "queues done and silent for the settle",
      { operatorIdleMs: 400, sinceStimulusMs: 400, queues: done },
      "queues",
    ],
    [
      "queues done, not yet silent for the settle",
      { operatorIdleMs: 200, sinceStimulusMs: 400, queues: done },
      undefined,
    ],
    [
      "queues not done: silence decides after the quiet period, as without metrics",
      { operatorIdleMs: 1_600, sinceStimulusMs: 1_600, queues: { ...done, done: false } },
      "silence",
    ],
    ["no metrics, silent for the quiet period", { operatorIdleMs: 1_500, sinceStimulusMs: 1_500 }, "silence"],
    ["no metrics, not silent long enough", { operatorIdleMs: 1_499, sinceStimulusMs: 1_600 }, undefined],
  ])("%s", (_name, silence, by) => {
    expect(quietBy(silence, 1_500)).toBe(by);
  });
});

describe("describeQuietDecisions", () => {
  it("says how many waits each evidence decided, and why the queues could not tell", () => {
    expect(
      describeQuietDecisions(
        [
          { by: "queues" },
          { by: "silence", queues: "no reading of the metrics endpoint yet" },
          { by: "queues" },
        ],
        1_500,
      ),
    ).toBe(
      "quiescence: 3 wait(s) decided, 2 by the operator's work queues (empty, no reconcile running), 1 by silence (1.5 s with no operator write; the queues could not tell: no reading of the metrics endpoint yet)",
    );
    expect(describeQuietDecisions([{ by: "silence" }], 1_500)).toBe(
      "quiescence: 1 wait(s) decided, 1 by silence (1.5 s with no operator write)",
    );
    expect(describeQuietDecisions([], 1_500)).toBeUndefined();
  });
});
