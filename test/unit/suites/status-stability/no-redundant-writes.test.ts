import { describe, expect, it } from "vitest";
import type { Status } from "../../../../src/report/report-model.js";
import { noRedundantWrites } from "../../../../src/suites/status-stability/no-redundant-writes.js";
import type { RestartAndTouchesObservation } from "../../../../src/suites/status-stability/restart-and-touches.js";
import { writeEntry } from "../../../support/write-entry.js";
import { contract, heartbeat, neverQuiet, settled, statusWrite, tickCreate, tickStatus } from "./fixtures.js";

const noOp = statusWrite({ seq: 26, effect: "no-op" });
const scaled = writeEntry({ seq: 27, changedPaths: ["spec.replicas"] });
const creates = [1, 2, 3, 4, 5].map((seq) =>
  writeEntry({
    seq,
    verb: "create",
    group: "",
    resource: "configmaps",
    name: `cm-${seq}`,
    effect: "created",
  }),
);

const rows: {
  readonly name: string;
  readonly observation: RestartAndTouchesObservation;
  readonly status: Status;
  readonly message: string;
  readonly evidenceWrites?: number;
  readonly notes?: readonly string[];
}[] = [
  {
    name: "passed: no write request at all",
    observation: settled(),
    status: "passed",
    message: "no write request at all",
  },
  {
    name: "passed: a tick of the operator's own clock (a child made, the status that records it) is not counted",
    observation: settled({ after: [tickCreate, tickStatus] }),
    status: "passed",
    message: "no write request but 2 of the operator's clock",
    evidenceWrites: 2,
  },
  {
    name: "inconclusive: a create named as a tick is, no mark, a delayed requeue pending at the baseline, no horizon",
    observation: settled({ after: [{ ...tickCreate, clock: undefined }], clockPendingAtBaseline: true }),
    status: "inconclusive",
    message:
      "1 operator write(s) of objects named as a schedule's ticks are (configmaps/web-tick-1), while its last reconcile before the restart had asked for a delayed requeue: a tick that fell due inside the restart's or the touches' reconciles cannot be told from an answer without a clock horizon (clock.horizon)",
    evidenceWrites: 1,
  },
  {
    name: "failed: the same create, with another request beside it, counts that one",
    observation: settled({
      after: [{ ...tickCreate, clock: undefined }, scaled],
      clockPendingAtBaseline: true,
    }),
    status: "failed",
    message: "1 operator write request(s) where none was needed (the server found 0 of them no-ops)",
    evidenceWrites: 1,
  },
  {
    name: "failed: a heartbeat of its clock is a request like any other (a contract declares it volatile)",
    observation: settled({ after: [heartbeat] }),
    status: "failed",
    message: "1 operator write request(s) where none was needed (the server found 0 of them no-ops)",
    evidenceWrites: 1,
  },
  {
    name: "failed: no-op requests count",
    observation: settled({ after: [noOp, scaled] }),
    status: "failed",
    message: "2 operator write request(s) where none was needed (the server found 1 of them no-ops)",
    evidenceWrites: 2,
  },
  {
    name: "never quiet, ready: every request fails it, even no-ops",
    observation: neverQuiet({ writes: [noOp] }),
    status: "failed",
    message: "the custom resource was ready but the operator never fell quiet: 1 write request(s)",
    evidenceWrites: 1,
  },
  {
    name: "never quiet, not ready, runaway creation: fails",
    observation: neverQuiet({ ready: false, writes: creates }),
    status: "failed",
    message: "the operator never fell quiet (and the custom resource never became ready): 5 write request(s)",
    evidenceWrites: 5,
  },
  {
    name: "never quiet, not ready, progress: inconclusive with the wait's notes",
    observation: neverQuiet({ ready: false, writes: [scaled] }),
    status: "inconclusive",
    message: "no convergence after the touches within 60 s: Ready; last operator write 12 ms ago",
    notes: ["operator: reconciling"],
  },
];

describe("status-stability/no-redundant-writes", () => {
  it.each(rows)("$name", (row) => {
    const judgement = noRedundantWrites.judge(row.observation, contract);
    expect(judgement.status).toBe(row.status);
    expect(judgement.message).toBe(row.message);
    if (row.evidenceWrites !== undefined) expect(judgement.evidence?.writes).toHaveLength(row.evidenceWrites);
    if (row.notes) expect(judgement.evidence).toEqual({ notes: row.notes });
    if (row.status === "passed" && row.evidenceWrites === undefined)
      expect(judgement.evidence).toBeUndefined();
  });

  it("notes the wait's writes on a scenario that never fell quiet", () => {
    const judgement = noRedundantWrites.judge(neverQuiet({ writes: [noOp] }), contract);
    expect(judgement.evidence?.notes).toEqual([
      "1 operator write(s) in the wait; the last 1 shown",
      "operator: reconciling",
    ]);
  });

  it("leaves no evidence on an inconclusive never-quiet scenario without notes", () => {
    const judgement = noRedundantWrites.judge(
      neverQuiet({ ready: false, notes: [], writes: [scaled] }),
      contract,
    );
    expect(judgement.status).toBe("inconclusive");
    expect(judgement.evidence).toBeUndefined();
  });
});
