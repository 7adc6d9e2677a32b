import { describe, expect, it } from "vitest";
import type { Contract } from "../../../../src/contract/load-contract.js";
import type { Status } from "../../../../src/report/report-model.js";
import { lastTransitionTime } from "../../../../src/suites/status-stability/last-transition-time.js";
import type { RestartAndTouchesObservation } from "../../../../src/suites/status-stability/restart-and-touches.js";
import {
  contract,
  customResource,
  neverQuiet,
  reference,
  settled,
  statusWrite,
  withPromises,
} from "./fixtures.js";

const T0 = "2025-01-01T00:00:00Z";
const T1 = "2025-01-01T00:05:00Z";

/** The status with Ready's lastTransitionTime (and status) as given; Progressing unchanged. */
function statusWith(ready: { status?: string; lastTransitionTime?: string } = {}) {
  return {
    observedGeneration: 1,
    conditions: [
      { type: "Ready", status: ready.status ?? "True", lastTransitionTime: ready.lastTransitionTime ?? T0 },
      { type: "Progressing", status: "False", lastTransitionTime: "2025-01-01T00:00:01Z" },
    ],
  };
}
const movedReady = customResource({ status: statusWith({ lastTransitionTime: T1 }) });
const readyVolatile = withPromises([
  {
    kind: "WebApp",
    keeps: ["resourceVersion", "uid", "generation"],
    volatile: [{ path: "status.conditions[type=Ready].lastTransitionTime", reason: "restamped on purpose" }],
  },
]);
const heartbeatVolatile = withPromises([
  {
    kind: "WebApp",
    keeps: ["resourceVersion", "uid", "generation"],
    volatile: [{ path: "status.lastHeartbeatTime", reason: "heartbeat" }],
  },
]);

const rows: {
  readonly name: string;
  readonly observation: RestartAndTouchesObservation;
  readonly contract?: Contract;
  readonly status: Status;
  readonly message: string;
  readonly notes?: readonly string[];
  readonly diffs?: number;
  readonly evidenceWrites?: number;
}[] = [
  {
    name: "never quiet: inconclusive with the wait's message and notes",
    observation: neverQuiet(),
    status: "inconclusive",
    message: "no convergence after the touches within 60 s: Ready; last operator write 12 ms ago",
    notes: ["operator: reconciling"],
  },
  {
    name: "skipped: no conditions in the baseline",
    observation: settled({
      reference: reference({ customResource: { uid: "u", resourceVersion: "1", status: {} } }),
    }),
    status: "skipped",
    message: "the custom resource reports no conditions",
  },
  {
    name: "passed: every condition kept its time",
    observation: settled({ after: [statusWrite({ seq: 26, effect: "no-op" })] }),
    status: "passed",
    message: "2 condition(s) kept their lastTransitionTime",
  },
  {
    name: "passed: a condition whose status changed may get a new time",
    observation: settled({
      settled: customResource({ status: statusWith({ status: "False", lastTransitionTime: T1 }) }),
    }),
    status: "passed",
    message: "2 condition(s) kept their lastTransitionTime",
  },
  {
    name: "passed with notes: a time the contract declares volatile",
    observation: settled({ settled: movedReady }),
    contract: readyVolatile,
    status: "passed",
    message: "1 condition(s) kept their lastTransitionTime (1 volatile by the contract)",
    notes: [
      "not counted: condition Ready got a new lastTransitionTime in a volatile field: status.conditions[type=Ready].lastTransitionTime (promises[0]: restamped on purpose)",
    ],
  },
  {
    name: "failed: a condition kept its status but got a new time",
    observation: settled({
      settled: movedReady,
      after: [statusWrite({ seq: 26, body: { status: statusWith({ lastTransitionTime: T1 }) } })],
    }),
    status: "failed",
    message: "1 condition(s) kept their status but got a new lastTransitionTime",
    diffs: 1,
    evidenceWrites: 1,
  },
  {
    name: "failed: a heartbeat write (volatile only) is not shown and explains nothing",
    observation: settled({
      settled: movedReady,
      after: [statusWrite({ seq: 26, changedPaths: ["status.lastHeartbeatTime"] })],
    }),
    contract: heartbeatVolatile,
    status: "failed",
    message: "1 condition(s) kept their status but got a new lastTransitionTime",
    evidenceWrites: 0,
  },
  {
    name: "passed: the operator's status writes show the condition went False and back",
    observation: settled({
      settled: movedReady,
      after: [
        statusWrite({ seq: 26, body: { status: statusWith({ status: "False", lastTransitionTime: T1 }) } }),
        statusWrite({ seq: 27, body: { status: statusWith({ lastTransitionTime: T1 }) } }),
      ],
    }),
    status: "passed",
    message: "2 condition(s) kept their lastTransitionTime",
  },
  {
    name: "inconclusive: a status write could not be read",
    observation: settled({ settled: movedReady, after: [statusWrite({ seq: 26 })] }),
    status: "inconclusive",
    message:
      "a condition got a new lastTransitionTime and some of the operator's status writes could not be read to tell whether it transitioned",
    evidenceWrites: 1,
  },
  {
    name: "failed: an unread no-op write does not make it inconclusive",
    observation: settled({ settled: movedReady, after: [statusWrite({ seq: 26, effect: "no-op" })] }),
    status: "failed",
    message: "1 condition(s) kept their status but got a new lastTransitionTime",
  },
];

const READY_TIME = "status.conditions[type=Ready].lastTransitionTime";
const READY_STATUS = "status.conditions[type=Ready].status";

/** An operator status write that changed the given fields of the stored custom resource. */
const changed = (seq: number, ...paths: string[]) =>
  statusWrite({ seq, effect: "changed", changedPaths: paths });

rows.push(
  {
    name: "failed: while the sample converged, a write moved Ready's time and left its status",
    observation: settled({
      reference: reference({ writes: [changed(3, READY_STATUS, READY_TIME), changed(5, READY_TIME)] }),
    }),
    status: "failed",
    message:
      "1 operator write(s) gave condition(s) Ready a new lastTransitionTime and left their status as it was",
    notes: [
      "write 5 changed status.conditions[type=Ready].lastTransitionTime but not the condition's status: a transition that did not happen",
    ],
    evidenceWrites: 1,
  },
  {
    name: "failed: never quiet, but its writes already show a time moved without a transition",
    observation: neverQuiet({ writes: [changed(7, READY_TIME, "status.message")] }),
    status: "failed",
    message:
      "1 operator write(s) gave condition(s) Ready a new lastTransitionTime and left their status as it was",
  },
  {
    name: "passed: a condition that appears, and one that changes status, get new times rightly",
    observation: settled({
      reference: reference({
        writes: [
          changed(3, READY_STATUS, READY_TIME, "status.conditions[type=Ready].reason"),
          changed(
            5,
            "status.conditions[type=Degraded].status",
            "status.conditions[type=Degraded].lastTransitionTime",
          ),
        ],
      }),
    }),
    status: "passed",
    message: "2 condition(s) kept their lastTransitionTime",
  },
  {
    name: "passed with notes: a moved time the contract declares volatile is no false transition",
    observation: settled({ reference: reference({ writes: [changed(5, READY_TIME)] }), settled: movedReady }),
    contract: readyVolatile,
    status: "passed",
    message: "1 condition(s) kept their lastTransitionTime (1 volatile by the contract)",
    notes: [
      "not counted: condition Ready got a new lastTransitionTime in a volatile field: status.conditions[type=Ready].lastTransitionTime (promises[0]: restamped on purpose)",
    ],
  },
  {
    name: "passed: writes of the kit, of a child, or with unknown changed fields are not the operator's statement",
    observation: settled({
      reference: reference({
        writes: [
          { ...changed(4, READY_TIME), actor: "kit" },
          { ...changed(5, READY_TIME), resource: "deployments", group: "apps" },
          statusWrite({ seq: 6, effect: "changed" }),
        ],
      }),
    }),
    status: "passed",
    message: "2 condition(s) kept their lastTransitionTime",
  },
);

describe("status-stability/last-transition-time", () => {
  it.each(rows)("$name", (row) => {
    const judgement = lastTransitionTime.judge(row.observation, row.contract ?? contract);
    expect(judgement.status).toBe(row.status);
    expect(judgement.message).toBe(row.message);
    if (row.notes) expect(judgement.evidence?.notes).toEqual(row.notes);
    if (row.diffs !== undefined) expect(judgement.evidence?.diffs).toHaveLength(row.diffs);
    if (row.evidenceWrites !== undefined) expect(judgement.evidence?.writes).toHaveLength(row.evidenceWrites);
    if (row.status === "passed" && !row.notes) expect(judgement.evidence).toBeUndefined();
  });

  it("shows the moved time as a diff", () => {
    const judgement = lastTransitionTime.judge(settled({ settled: movedReady }), contract);
    expect(judgement.evidence?.diffs).toEqual([
      {
        object: "custom resource",
        path: "status.conditions[type=Ready].lastTransitionTime",
        expected: T0,
        actual: T1,
      },
    ]);
  });
});
