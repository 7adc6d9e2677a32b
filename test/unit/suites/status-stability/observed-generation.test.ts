import { describe, expect, it } from "vitest";
import type { Contract } from "../../../../src/contract/load-contract.js";
import type { Status } from "../../../../src/report/report-model.js";
import { observedGeneration } from "../../../../src/suites/status-stability/observed-generation.js";
import type { RestartAndTouchesObservation } from "../../../../src/suites/status-stability/restart-and-touches.js";
import { writeEntry } from "../../../support/write-entry.js";
import { contract, customResource, neverQuiet, reference, settled } from "./fixtures.js";

const noUpdates: Contract = { ...contract, updates: [] };
/** Ready says it observed generation 2; status.observedGeneration still says 1: the condition's is read first. */
const conditionFirst = {
  observedGeneration: 1,
  conditions: [{ type: "Ready", status: "True", observedGeneration: 2 }],
};

const rows: {
  readonly name: string;
  readonly observation: RestartAndTouchesObservation;
  readonly contract?: Contract;
  readonly status: Status;
  readonly message: string;
}[] = [
  {
    name: "never quiet: inconclusive with the wait's message",
    observation: neverQuiet(),
    status: "inconclusive",
    message: "no convergence after the touches within 60 s: Ready; last operator write 12 ms ago",
  },
  {
    name: "skipped: the baseline reports no observedGeneration",
    observation: settled({
      reference: reference({
        customResource: { uid: "u", resourceVersion: "1", status: { conditions: [] } },
      }),
    }),
    status: "skipped",
    message: "the custom resource reports no observedGeneration",
  },
  {
    name: "failed: behind the generation after metadata-only changes",
    observation: settled({ settled: customResource({ generation: 2 }) }),
    status: "failed",
    message: "after metadata-only changes observedGeneration is 1, generation 2",
  },
  {
    name: "failed: none at all after metadata-only changes",
    observation: settled({ settled: customResource({ status: {} }) }),
    status: "failed",
    message: "after metadata-only changes observedGeneration is ?, generation 1",
  },
  {
    name: "passed: current, and no spec update to follow",
    observation: settled(),
    contract: noUpdates,
    status: "passed",
    message:
      "observedGeneration stayed at generation 1 through metadata-only changes (no spec update in the contract to follow)",
  },
  {
    name: "passed: the Ready condition's observedGeneration is read before status.observedGeneration",
    observation: settled({ settled: customResource({ generation: 2, status: conditionFirst }) }),
    contract: noUpdates,
    status: "passed",
    message: "observedGeneration stayed at generation 2 through metadata-only changes",
  },
  {
    name: "inconclusive: the API server refused the update",
    observation: settled({
      specUpdate: { outcome: "refused", message: "the API server refused the contract's update 1: invalid" },
    }),
    status: "inconclusive",
    message: "the API server refused the contract's update 1: invalid",
  },
  {
    name: "passed: caught up with the spec update",
    observation: settled({ specUpdate: { outcome: "caught-up", generation: 2 } }),
    status: "passed",
    message:
      "observedGeneration caught up with the spec update (generation 2) and stayed put for metadata-only changes",
  },
  {
    name: "failed: fell silent without catching up with the spec update",
    observation: settled({
      specUpdate: {
        outcome: "gave-up",
        lastReason: "observedGeneration 1, generation 2",
        observed: 1,
        generation: 2,
        writes: [writeEntry({ seq: 40 })],
        operatorLog: ["reconciling"],
      },
    }),
    status: "failed",
    message:
      "observedGeneration did not catch up with the spec update: observedGeneration 1, generation 2, and the operator has made no write for 10 s",
  },
  {
    // The deadline passed with the operator still writing: no evidence of a violation (seen on a slow
    // machine, where a rollout loop kept the example's timestamp-in-template mutant busy).
    name: "inconclusive: the deadline passed while the operator was still writing",
    observation: settled({
      specUpdate: {
        outcome: "deadline",
        lastReason: "observedGeneration 2, generation 2; operator wrote 80 ms ago",
        observed: 2,
        generation: 2,
        timeoutMs: 60_000,
        writes: [writeEntry({ seq: 40 })],
        operatorLog: ["reconciling"],
      },
    }),
    status: "inconclusive",
    message:
      "no verdict within 60 s of the spec update: the operator was still writing at the deadline (last seen: observedGeneration 2, generation 2; operator wrote 80 ms ago)",
  },
  {
    name: "inconclusive: the update was due but not applied",
    observation: settled(),
    status: "inconclusive",
    message: "the spec update was not applied",
  },
];

describe("status-stability/observed-generation", () => {
  it.each(rows)("$name", (row) => {
    const judgement = observedGeneration.judge(row.observation, row.contract ?? contract);
    expect(judgement.status).toBe(row.status);
    expect(judgement.message).toContain(row.message);
  });

  it("shows the writes since the update and the operator's log when it did not catch up", () => {
    const judgement = observedGeneration.judge(
      settled({
        specUpdate: {
          outcome: "gave-up",
          lastReason: "observedGeneration 1, generation 2",
          writes: [writeEntry({ seq: 40 })],
          operatorLog: ["reconciling"],
        },
      }),
      contract,
    );
    expect(judgement.evidence?.writes).toEqual([
      expect.objectContaining({ seq: 40, write: "update deployments.apps/web" }),
    ]);
    expect(judgement.evidence?.operatorLog).toEqual(["reconciling"]);
  });

  it("needs the spec update phase", () => {
    expect(observedGeneration.needs).toEqual(["spec update"]);
  });
});
