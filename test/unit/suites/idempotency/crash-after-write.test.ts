import { describe, expect, it } from "vitest";
import { loadContract } from "../../../../src/contract/load-contract.js";
import { crashAfterWrite } from "../../../../src/suites/idempotency/crash-after-write.js";
import { crashLineCases } from "./crash-line-cases.js";
import { crashLineContext, write } from "./fixtures.js";

const contract = await loadContract("examples/webapp-operator/reconcile-conformance.yaml");

const context = (writes: Parameters<typeof crashLineContext>[1]) => crashLineContext(contract, writes);

describe("crash-after-write: its targets", () => {
  it("takes every write of the reference's sequence but creates, ignored kinds left out", () => {
    const targets = crashAfterWrite.targets(
      context([
        write({ seq: 1, namespace: "ref", verb: "create", code: 201, effect: "created" }),
        write({ seq: 2, namespace: "ref", verb: "update" }),
        // A Lease the contract ignores: counted by the fault, never a line.
        write({ seq: 3, namespace: "ref", verb: "update", resource: "leases", group: "coordination.k8s.io" }),
        write({ seq: 4, namespace: "ref", verb: "update", resource: "webapps", subresource: "status" }),
      ]),
    );
    if ("skip" in targets) throw new Error(targets.skip);
    expect(targets.map((t) => crashAfterWrite.targetName(t))).toEqual([
      "update services/hello",
      "update webapps/hello/status",
    ]);
  });

  it("is skipped when the operator made nothing but creates", () => {
    expect(
      crashAfterWrite.targets(
        context([write({ seq: 1, namespace: "ref", verb: "create", code: 201, effect: "created" })]),
      ),
    ).toEqual({
      target: "write sequence",
      skip: "the operator made no write but creates on its way to the reference",
    });
  });
});

describe("crash-after-write: the judge", () => {
  const line = { ordinal: 2, id: "#2 update services/hello", write: write({ seq: 2, verb: "update" }) };
  it.each(crashLineCases(contract, line))("$name", (row) => {
    const judgement = crashAfterWrite.judge(row.observation, row.contract ?? contract);
    expect(judgement.status).toBe(row.status);
    expect(judgement.message).toContain(row.message);
    row.also?.(judgement);
  });

  it("judges no reference failure itself: the runner makes it inconclusive", () => {
    expect("judgeWithoutReference" in crashAfterWrite).toBe(false);
  });
});
