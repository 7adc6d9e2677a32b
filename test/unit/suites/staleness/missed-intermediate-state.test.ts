import { describe, expect, it } from "vitest";
import {
  coalescedEnough,
  missedIntermediateState,
  type MissedIntermediateStateObservation,
} from "../../../../src/suites/staleness/missed-intermediate-state.js";
import { writeEntry } from "../../../support/write-entry.js";
import { exampleContract, service, watchProof } from "./staleness-fixtures.js";

/** The example's contract has two updates: the reference is that of update 2. */
function converged(
  changes: Partial<Extract<MissedIntermediateStateObservation, { stage: "converged" }>> = {},
): MissedIntermediateStateObservation {
  return {
    stage: "converged",
    released: watchProof(3, 1),
    reference: [service("web", "ref-uid", 9090)],
    live: [service("web", "u1", 9090)],
    writes: [writeEntry({ seq: 7 }), writeEntry({ seq: 8 })],
    operatorLog: ["reconciled hello"],
    ...changes,
  };
}

const TOO_FEW = "the coalescing fault took too few events to hide an intermediate state";

describe("coalescedEnough", () => {
  it.each([
    { taken: 3, delivered: 1, enough: true },
    { taken: 2, delivered: 1, enough: true },
    { taken: 1, delivered: 0, enough: false },
    { taken: 0, delivered: 0, enough: false },
    { taken: 2, delivered: 2, enough: false },
    { taken: 3, delivered: 4, enough: false },
  ])("took $taken, delivered $delivered: $enough", ({ taken, delivered, enough }) => {
    expect(coalescedEnough(watchProof(taken, delivered))).toBe(enough);
  });
});

describe("staleness/missed-intermediate-state judge", () => {
  it.each([
    {
      name: "stopped at the release: too few events taken",
      observation: { stage: "coalesced", released: watchProof(1, 1) } as const,
      status: "inconclusive",
      message: TOO_FEW,
    },
    {
      name: "converged, but the proof shows nothing hidden",
      observation: converged({ released: watchProof(2, 2) }),
      status: "inconclusive",
      message: TOO_FEW,
    },
    {
      name: "a child of the final reference is missing",
      observation: converged({ live: [] }),
      status: "failed",
      message:
        "after seeing only the last of 2 spec updates, it ended unlike the reference of update 2: missing Service/web",
    },
    {
      name: "a managed field still as an intermediate spec had it",
      observation: converged({ live: [service("web", "u1", 8080)] }),
      status: "failed",
      message:
        "after seeing only the last of 2 spec updates, it ended unlike the reference of update 2: 2 managed field(s) differ from the reference",
    },
    {
      name: "a duplicate child",
      observation: converged({ live: [service("web", "u1", 9090), service("web-old", "u0", 9090)] }),
      status: "failed",
      message: "2 Service(s) where the reference has 1 (web, web-old)",
    },
    {
      name: "converged to the reference of the final spec",
      observation: converged(),
      status: "passed",
      message: "seeing only the last of 2 spec updates, it converged to the reference of update 2",
    },
  ])("$name: $status", async ({ observation, status, message }) => {
    const verdict = missedIntermediateState.judge(observation, await exampleContract());
    expect(verdict.status).toBe(status);
    expect(verdict.message).toContain(message);
    const { taken, delivered } = observation.released;
    expect(verdict.evidence?.notes).toEqual([
      expect.stringContaining(
        `coalesced the custom resource's events on 1 watch stream(s): took ${taken.length} (ADDED web@100`,
      ),
    ]);
    expect(verdict.evidence?.notes?.[0]).toContain(`delivered ${delivered.length}`);
    expect(verdict.evidence?.writes).toEqual(status === "inconclusive" ? undefined : expect.any(Array));
    expect(verdict.evidence?.operatorLog).toEqual(status === "failed" ? ["reconciled hello"] : undefined);
  });

  it("shows the fields that differ from the final reference", async () => {
    const verdict = missedIntermediateState.judge(
      converged({ live: [service("web", "u1", 8080)] }),
      await exampleContract(),
    );
    expect(verdict.evidence?.diffs).toContainEqual({
      object: "Service/web",
      path: "spec.ports[0].port",
      expected: 9090,
      actual: 8080,
    });
  });

  it("lists at most eight events of the proof", async () => {
    const verdict = missedIntermediateState.judge(
      converged({ released: watchProof(10, 1) }),
      await exampleContract(),
    );
    expect(verdict.evidence?.notes?.[0]).toContain("MODIFIED web@107, …), delivered 1 (ADDED web@100)");
  });
});

describe("staleness/missed-intermediate-state targets", () => {
  it("is skipped as a whole when the contract has no updates", async () => {
    const contract = await exampleContract();
    expect(missedIntermediateState.skip?.({ ...contract, updates: [] })).toEqual({
      target: "updates",
      skip: "the contract has no updates: there is no intermediate state to miss",
    });
    expect(missedIntermediateState.skip?.(contract)).toBeUndefined();
  });

  it("is skipped, not inconclusive, with one update: there is nothing between the sample and it", async () => {
    const contract = await exampleContract();
    expect(missedIntermediateState.skip?.({ ...contract, updates: contract.updates.slice(0, 1) })).toEqual({
      target: "updates",
      skip: "the contract has one update: an intermediate state to miss needs two (add a second to `updates`)",
    });
  });

  it("needs the reference of the last update (and the sample's, whose lives teach the per-life values), and is one target named by the updates", async () => {
    const contract = await exampleContract();
    expect(missedIntermediateState.references?.(contract)).toEqual([0, 2]);
    expect(missedIntermediateState.targets({ contract, references: new Map() })).toEqual(["updates 1-2"]);
  });
});
