import { describe, expect, it } from "vitest";
import type { QueueReading } from "../../../src/operator/metrics/queue-readings.js";
import type { DeliveredEvent } from "../../../src/proxy/read-log.js";
import type { WriteEntry } from "../../../src/proxy/write-log.js";
import { clockMarks, type ActivityRecord } from "../../../src/scenario/clock-writes.js";
import { clockFamily, describeClockWrite } from "../../../src/scenario/clock-marks.js";
import { writeEntry } from "../../support/write-entry.js";

// A CronJob-style operator: it writes its status at t0 and asks to be requeued at the next tick; at
// the tick (t0 + 5 s) it creates a Job. Each row changes one thing between the two writes.
const T0 = Date.parse("2026-12-07T12:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();

const status = writeEntry({
  seq: 4,
  time: at(0),
  run: 1,
  group: "batch.example.com",
  resource: "cronjobs",
  subresource: "status",
  name: "nightly",
  resourceVersion: "104",
});
const tick = writeEntry({
  seq: 6,
  time: at(5_000),
  run: 1,
  verb: "create",
  group: "batch",
  resource: "jobs",
  name: "nightly-1796610660",
  code: 201,
  effect: "created",
  resourceVersion: "120",
});
const kitTouch = writeEntry({ seq: 5, time: at(4_950), actor: "kit", resource: "cronjobs", name: "nightly" });

const event = (fields: Partial<DeliveredEvent>): DeliveredEvent => ({
  type: "MODIFIED",
  group: "batch.example.com",
  resource: "cronjobs",
  namespace: "ns",
  name: "nightly",
  resourceVersion: "104",
  run: 1,
  beforeWriteSeq: 5,
  ...fields,
});

/** The Job controller's change of an earlier Job, delivered at `at`: news of another writer's. */
const jobChanged = (at?: number) =>
  event({
    group: "batch",
    resource: "jobs",
    name: "nightly-1",
    resourceVersion: "110",
    ...(at === undefined ? {} : { at }),
  });

/** Readings every 100 ms from t0: its status write's reconcile ends `ended`, then the queues idle until the tick. */
function readings(
  ended: "requeue_after" | "error" | "success",
  options: { busy?: boolean; run?: number } = {},
): QueueReading[] {
  const list: QueueReading[] = [];
  for (let ms = 0; ms < 5_000; ms += 100) {
    const done = ms >= 200;
    list.push({
      at: T0 + ms,
      run: options.run ?? 1,
      queues: { cronjob: { depth: options.busy && done ? 1 : 0, adds: 3 } },
      activeWorkers: { cronjob: done && !options.busy ? 0 : 1 },
      reconciles: { success: 2, ...(done ? { [ended]: 1 } : {}) },
      // controller-runtime's priority queue counts a RequeueAfter's delayed add as a retry too.
      retries: done && ended !== "success" ? 1 : 0,
    });
  }
  return list;
}

const record = (fields: Partial<ActivityRecord> & { writes: WriteEntry[] }): ActivityRecord => ({
  deliveries: [],
  quietPeriodMs: 1_500,
  ...fields,
});

describe("clockMarks", () => {
  it.each<[string, ActivityRecord, "queues" | "silence" | undefined]>([
    [
      "a tick after a RequeueAfter its queues show: the clock's, by the queues",
      record({ writes: [status, tick], readings: readings("requeue_after") }),
      "queues",
    ],
    [
      "the same tick from an operator without metrics: the clock's, by silence alone",
      record({ writes: [status, tick] }),
      "silence",
    ],
    [
      "the echo of its own status write delivered in between is no news",
      record({ writes: [status, tick], deliveries: [event({})] }),
      "silence",
    ],
    [
      "the DELETED event of its own delete is no news either",
      record({
        writes: [
          writeEntry({ seq: 4, time: at(0), run: 1, verb: "delete", name: "old", effect: "deleted" }),
          tick,
        ],
        deliveries: [
          event({
            type: "DELETED",
            group: "apps",
            resource: "deployments",
            name: "old",
            resourceVersion: "130",
          }),
        ],
      }),
      "silence",
    ],
    [
      "a kit write in between, with a tick due at the same time: an answer to the kit, not excused",
      record({ writes: [status, kitTouch, tick], readings: readings("requeue_after") }),
      undefined,
    ],
    [
      "a kit write 3 s before, which it answered with nothing and fell quiet after: the clock's",
      record({
        writes: [status, { ...kitTouch, time: at(2_000) }, tick],
        readings: readings("requeue_after"),
      }),
      "queues",
    ],
    [
      "another writer's change delivered just before (a built-in controller's): news it may answer",
      record({
        writes: [status, tick],
        deliveries: [jobChanged(T0 + 4_950)],
        readings: readings("requeue_after"),
      }),
      undefined,
    ],
    [
      "news delivered 3 s before, and quiet since: the clock's",
      record({
        writes: [status, tick],
        deliveries: [jobChanged(T0 + 2_000)],
        readings: readings("requeue_after"),
      }),
      "queues",
    ],
    [
      "news whose time was not recorded: it may have come just before, not excused",
      record({
        writes: [status, tick],
        deliveries: [jobChanged()],
        readings: readings("requeue_after"),
      }),
      undefined,
    ],
    [
      "a restarted run that listed what it watches at 1 s and fell quiet: its tick is the clock's",
      record({
        writes: [status, { ...tick, run: 2 }],
        deliveries: [
          event({ type: "ADDED", resourceVersion: "104", run: 2, beforeWriteSeq: 5, at: T0 + 1_000 }),
        ],
        readings: readings("requeue_after", { run: 2 }),
      }),
      "queues",
    ],
    [
      "a restart in between: the first write of a new run answers the restart",
      record({ writes: [status, { ...tick, run: 2 }] }),
      undefined,
    ],
    [
      "the previous write failed: this one is its retry",
      record({ writes: [{ ...status, code: 409, reason: "Conflict" }, tick] }),
      undefined,
    ],
    [
      "the queues never fell idle in between: it answers work that was going on",
      record({ writes: [status, tick], readings: readings("requeue_after", { busy: true }) }),
      undefined,
    ],
    [
      "without metrics, a gap shorter than the quiet period is no evidence of silence",
      record({ writes: [status, { ...tick, time: at(900) }] }),
      undefined,
    ],
    ["its first write: nothing to have fallen quiet after", record({ writes: [tick] }), undefined],
  ])("%s", (_name, activity, by) => {
    expect(clockMarks(activity).get(tick.seq)?.by).toBe(by);
  });

  it("says what was pending: a retry the queues asked for, or nothing they showed", () => {
    const pendingOf = (ended: "error" | "success") =>
      clockMarks(record({ writes: [status, tick], readings: readings(ended) })).get(tick.seq)?.pending;
    expect(pendingOf("error")).toContain("rate-limited retry");
    expect(pendingOf("success")).toContain("nothing pending");
  });

  it("skips the manager's bookkeeping: a Lease renewal in between is neither the previous write nor news", () => {
    const lease = writeEntry({ seq: 5, time: at(2_000), run: 1, resource: "leases", tag: "lease" });
    const mark = clockMarks(
      record({ writes: [status, lease, tick], readings: readings("requeue_after") }),
    ).get(tick.seq);
    expect(mark).toMatchObject({ by: "queues", quietSinceSeq: status.seq, afterMs: 5_000 });
  });

  it("marks only the operator's writes the clock made, and describes each with its evidence", () => {
    const marks = clockMarks(record({ writes: [status, tick] }));
    expect([...marks.keys()]).toEqual([tick.seq]);
    expect(describeClockWrite({ ...tick, clock: marks.get(tick.seq) })).toBe(
      "write 6 at 12:00:05.000, 5.0 s after the operator's write 4, with nothing the kit did and no watch event of news since: it publishes no work queues, so what was pending is not known (told from silence alone: weaker evidence)",
    );
  });
});

describe("clockMarks of a tick that came due while the operator was down", () => {
  // Run 1 makes Job -1 on a tick (a clock write), its last reconcile asks for a delayed requeue, and
  // it is killed; run 2's first burst creates Job -2: the tick due while it was down.
  const caughtUp = writeEntry({
    seq: 9,
    time: at(6_300),
    run: 2,
    verb: "create",
    group: "batch",
    resource: "jobs",
    name: "nightly-1796610720",
    code: 201,
    effect: "created",
    resourceVersion: "150",
  });
  const restartedStatus = writeEntry({ ...status, seq: 8, time: at(6_200), run: 2, resourceVersion: "149" });
  const writes = [status, tick, restartedStatus, caughtUp];
  const killedRunReadings = readings("requeue_after");

  it.each<[string, Partial<ActivityRecord> & { writes: WriteEntry[] }, boolean]>([
    ["a Job, the kind the killed run's clock made, in the restarted run's first burst", { writes }, true],
    [
      "a kind the killed run's clock never made: the crash suite's to judge",
      { writes: [status, tick, restartedStatus, { ...caughtUp, resource: "configmaps", group: "" }] },
      false,
    ],
    [
      "within the clock horizon, where every life has the ticks",
      { writes, sampleCreatedAt: T0 - 1_000, horizonMs: 10_000 },
      false,
    ],
    ["after the horizon", { writes, sampleCreatedAt: T0 - 1_000, horizonMs: 5_000 }, true],
    [
      "a kit write after the restart: the create may answer it",
      { writes: [status, tick, { ...kitTouch, seq: 7, time: at(6_100) }, restartedStatus, caughtUp] },
      false,
    ],
  ])("%s", (_name, fields, marked) => {
    const mark = clockMarks(record({ readings: killedRunReadings, ...fields })).get(caughtUp.seq);
    expect(mark?.catchUp ?? false).toBe(marked);
  });

  it("not when the killed run had nothing pending", () => {
    // Its tick's create marked by silence (no readings over it), its queues ending with nothing pending.
    const nothingPending = readings("success").map((r) => ({ ...r, at: r.at + 5_500 }));
    expect(clockMarks(record({ writes, readings: nothingPending })).get(caughtUp.seq)).toBeUndefined();
  });
});

describe("clockMarks of a tick's burst", () => {
  // The tick creates the Job, the Job controller changes it, the operator records the tick in status.
  const recordTick = writeEntry({
    ...status,
    seq: 7,
    time: at(5_040),
    resourceVersion: "125",
  });
  const jobChanged = event({
    group: "batch",
    resource: "jobs",
    name: tick.name,
    resourceVersion: "122",
    beforeWriteSeq: 7,
  });
  const podAdded = event({
    type: "ADDED",
    group: "",
    resource: "pods",
    name: "nightly-1796610660-x7k2p",
    resourceVersion: "123",
    beforeWriteSeq: 7,
  });

  it.each<[string, DeliveredEvent[], number | undefined]>([
    ["its status write goes on with the tick's burst", [], tick.seq],
    ["so it does after the Job it created changed: the firing's own news", [jobChanged], tick.seq],
    ["not after news of another object: an answer to that", [podAdded], undefined],
  ])("%s", (_name, deliveries, firing) => {
    const marks = clockMarks(
      record({ writes: [status, tick, recordTick], deliveries, readings: readings("requeue_after") }),
    );
    expect(marks.get(tick.seq)?.firing).toBeUndefined();
    expect(marks.get(recordTick.seq)?.firing).toBe(firing);
  });

  it("ends at a pause of the quiet period", () => {
    const later = { ...recordTick, time: at(7_000) };
    expect(clockMarks(record({ writes: [status, tick, later] })).get(later.seq)?.firing).toBeUndefined();
  });

  it("describes a write of the burst by the write that began it", () => {
    const marks = clockMarks(record({ writes: [status, tick, recordTick] }));
    expect(describeClockWrite({ ...recordTick, clock: marks.get(recordTick.seq) })).toMatch(
      /^write 7 at 12:00:05.040, in the burst the operator's clock began with write 6 \(/,
    );
  });
});

describe("clockFamily", () => {
  it.each<[string, string, string | undefined]>([
    ["a tick's number", "hello-tick-1", "/configmaps/hello-tick-"],
    ["a tick's time", "nightly-1796610660", "/configmaps/nightly-"],
    ["a generateName suffix", "hello-tick-xwv55", "/configmaps/hello-tick-"],
    ["a hash", "registration-1a2b3c4d", "/configmaps/registration-"],
    ["a role's word: never a tick's kin", "hello-web", undefined],
    ["a longer word", "hello-migrate", undefined],
    ["no dash", "hello", undefined],
  ])("%s", (_name, name, family) => {
    expect(clockFamily({ group: "", resource: "configmaps", name })).toBe(family);
  });
});
