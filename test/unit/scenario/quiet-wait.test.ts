import { describe, expect, it } from "vitest";
import { AbortedError, InfrastructureError } from "../../../src/errors.js";
import type { QueueReading } from "../../../src/operator/metrics/queue-readings.js";
import { Inconclusive } from "../../../src/scenario/inconclusive.js";
import { ScenarioQuiescence, type SilenceSources } from "../../../src/scenario/operator-silence.js";
import type { Silence } from "../../../src/scenario/quiescence.js";
import {
  doneRegardless,
  holds,
  notYet,
  untilQuiet,
  type QuietWait,
  type Sighting,
  type Waited,
} from "../../../src/scenario/quiet-wait.js";

// The one wait of a scenario after a stimulus: a fact that holds ends it once the operator is done by
// the quiescence rule (its queues, else silence); the deadline is Inconclusive unless the caller says
// otherwise, never a failure by itself. The run's clock is faked: each observation is 100 ms later.

const STIMULUS_AT = 10_000;
const QUIET_PERIOD_MS = 1_500;
const SETTLE_MS = 300;

interface WorldOptions {
  /** The operator's metrics publish idle queues (every reading empty, 5 reconciles done). */
  readonly queues?: boolean;
  /** The operator writes without a break until this reading of the clock (default long before the stimulus). */
  readonly writingUntil?: number;
}

/** A scenario's quiescence over a fake operator and proxy, with its clock moved by `tick`. */
function world({ queues = false, writingUntil = 0 }: WorldOptions) {
  let now = STIMULUS_AT;
  const idle = (at: number): QueueReading => ({
    at,
    run: 1,
    queues: { widget: { depth: 0, adds: 5 } },
    activeWorkers: { widget: 0 },
    reconciles: { success: 5 },
    retries: 0,
  });
  const sources = {
    clock: { now: () => now },
    contract: {
      quietPeriodMs: QUIET_PERIOD_MS,
      timeouts: { convergeMs: 1_000 },
      operator: queues ? { mode: "process", metrics: { settleMs: SETTLE_MS } } : { mode: "deployed" },
    },
    proxy: {
      get operatorIdleMs() {
        return now < writingUntil ? 0 : now - writingUntil;
      },
      lastDeliveryAt: undefined,
      writeLog: { query: () => [] },
      readLog: { delivered: [], query: () => [] },
    },
    operator: {
      get queueReadings() {
        const readings: QueueReading[] = [];
        for (let at = 0; at <= now; at += 100) readings.push(idle(at));
        return readings;
      },
    },
  } as unknown as SilenceSources;
  const quiescence = new ScenarioQuiescence(sources);
  return {
    scenario: {
      quiescence,
      contract: sources.contract,
      operatorLogNotes: () => Promise.resolve(["operator: reconciling widget"]),
    },
    tick: () => (now += 100),
    now: () => now,
  };
}

/** What one observation may use: its number (1-based), the silence since the stimulus, the wait's abort. */
interface Observing {
  readonly n: number;
  readonly silence: () => Silence;
  readonly abort: () => void;
  readonly now: number;
}

type Expected =
  | { readonly waited: Waited<string>; readonly decisions?: readonly string[] }
  | { readonly rejects: RegExp | Error; readonly notes?: readonly string[] };

const verdict = new InfrastructureError("operator/exited", "the operator exited");

describe("untilQuiet", () => {
  it.each<
    [
      string,
      WorldOptions,
      (o: Observing) => Sighting<string>,
      Partial<Pick<QuietWait<string>, "atDeadline" | "timeoutMs">>,
      Expected,
    ]
  >([
    [
      "the fact holds and the operator is silent for the quiet period: done by silence",
      {},
      () => holds("repaired", "repaired; not quiet yet"),
      {},
      { waited: { value: "repaired", by: "silence" }, decisions: ["silence"] },
    ],
    [
      "the fact holds and the operator's queues say done: done by queues, before the quiet period",
      { queues: true },
      () => holds("repaired", "repaired; not quiet yet"),
      {},
      { waited: { value: "repaired", by: "queues" }, decisions: ["queues"] },
    ],
    [
      "the fact holds but the operator writes for a while: it waits, then done by silence",
      { writingUntil: STIMULUS_AT + 1_000 },
      ({ now }) => holds(`repaired at ${now}`, "repaired; not quiet yet"),
      {},
      {
        waited: { value: `repaired at ${STIMULUS_AT + 1_000 + QUIET_PERIOD_MS}`, by: "silence" },
        decisions: ["silence"],
      },
    ],
    [
      "the fact holds but the operator never stops writing: Inconclusive naming the unquiet reason",
      { writingUntil: Infinity },
      () => holds("repaired", (s) => `repaired; operator idle ${s.operatorIdleMs} ms`),
      {},
      {
        rejects: /^no repair of the widget within 1 s: repaired; operator idle 0 ms$/,
        notes: ["operator: reconciling widget"],
      },
    ],
    [
      "the fact never holds: Inconclusive at the deadline naming the last reason",
      {},
      ({ n }) => notYet(`left: widget (observation ${n > 1 ? "later" : "first"})`),
      {},
      { rejects: /^no repair of the widget within 1 s: left: widget \(observation later\)$/ },
    ],
    [
      "the fact holds from a later stimulus: silence counts from it",
      {},
      ({ now }) => holds(`repaired at ${now}`, "not quiet since the update", STIMULUS_AT + 1_000),
      {},
      { waited: { value: `repaired at ${STIMULUS_AT + 1_000 + QUIET_PERIOD_MS}`, by: "silence" } },
    ],
    [
      "the observation ends the wait on its own (the operator gave up): done, quiet or not",
      { writingUntil: Infinity },
      ({ n }) => (n === 3 ? doneRegardless("gave up") : notYet("not repaired")),
      {},
      { waited: { value: "gave up", by: "observation" }, decisions: [] },
    ],
    [
      "the caller says what the deadline means: a value, not a verdict",
      {},
      () => notYet("not repaired"),
      { atDeadline: ({ awaited, lastReason }) => `${awaited}: ${lastReason}` },
      { waited: { value: "repair of the widget: not repaired", by: "deadline" } },
    ],
    [
      "an error the observation throws is a reason to go on, named at the deadline",
      {},
      () => {
        throw new Error("connection refused");
      },
      {},
      { rejects: /^no repair of the widget within 1 s: connection refused$/ },
    ],
    [
      "a KitError the observation throws ends the wait at once",
      {},
      () => {
        throw verdict;
      },
      { timeoutMs: 60_000 },
      { rejects: verdict },
    ],
    [
      "an abort ends the wait with AbortedError",
      {},
      ({ n, abort }) => {
        if (n === 2) abort();
        return notYet("not repaired");
      },
      { timeoutMs: 60_000 },
      { rejects: new AbortedError("waiting for repair of the widget: aborted") },
    ],
  ])("%s", async (_name, options, observe, overrides, expected) => {
    const { scenario, tick, now } = world(options);
    const controller = new AbortController();
    let n = 0;
    const waiting = untilQuiet(scenario, {
      awaited: "repair of the widget",
      stimulusAt: STIMULUS_AT,
      intervalMs: 1,
      signal: controller.signal,
      observe: (silence) => {
        tick();
        return observe({ n: ++n, silence, abort: () => controller.abort(), now: now() });
      },
      ...overrides,
    });
    if ("waited" in expected) {
      await expect(waiting).resolves.toEqual(expected.waited);
      if (expected.decisions) {
        expect(scenario.quiescence.decisions.map((d) => d.by)).toEqual(expected.decisions);
      }
      return;
    }
    const error = await waiting.catch((e: unknown) => e);
    if (expected.rejects instanceof RegExp) {
      expect(error).toBeInstanceOf(Inconclusive);
      expect((error as Inconclusive).message).toMatch(expected.rejects);
      if (expected.notes) expect((error as Inconclusive).notes).toEqual(expected.notes);
    } else if (expected.rejects === verdict) {
      expect(error).toBe(verdict);
      expect(n).toBe(1);
    } else {
      expect(error).toBeInstanceOf(AbortedError);
      expect((error as Error).message).toBe(expected.rejects.message);
    }
  });
});
