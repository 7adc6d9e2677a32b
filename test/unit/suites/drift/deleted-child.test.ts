import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadContract, type Contract } from "../../../../src/contract/load-contract.js";
import {
  deletedChild,
  type DeletedChildObservation,
  type Recreation,
} from "../../../../src/suites/drift/deleted-child.js";
import type { SpecReference } from "../../../../src/scenario/spec-references.js";
import { writeEntry } from "../../../support/write-entry.js";

// The judge of drift/deleted-child on observations built by hand, and its targets.
const root = join(import.meta.dirname, "../../../..");
let contract: Contract;
beforeAll(async () => {
  contract = await loadContract(join(root, "examples/webapp-operator/reconcile-conformance.yaml"));
});

const fields = [
  {
    id: "Service/hello spec.selector.app",
    kind: "Service",
    name: "hello",
    path: ["spec", "selector", "app"],
    value: "hello",
    perturbed: "hello-drift",
  },
];
const recreated = (app: string): Recreation => ({
  outcome: "recreated",
  object: {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "hello", uid: "uid-2" },
    spec: { selector: { app } },
  },
});
const observation = (recreation: Recreation): DeletedChildObservation => ({
  name: "Service/hello",
  fields,
  recreation,
  writes: [
    writeEntry({
      seq: 5,
      verb: "create",
      resource: "services",
      group: "",
      name: "hello",
      effect: "created",
      code: 201,
    }),
  ],
  operatorLog: ["log line"],
});

describe("drift/deleted-child judge", () => {
  it.each<[string, Recreation, string, RegExp]>([
    [
      "recreated as the reference has it",
      recreated("hello"),
      "passed",
      /^recreated \(uid uid-2\) as the reference has it$/,
    ],
    [
      "recreated with a managed field otherwise",
      recreated("other"),
      "failed",
      /^recreated, but 1 managed field\(s\) differ from the reference$/,
    ],
    [
      "never recreated, the operator silent",
      { outcome: "gave-up" },
      "failed",
      /^not recreated: the operator has made no write for 10 s since the deletion$/,
    ],
    [
      // No evidence of a violation: the operator was still at work when the time ran out.
      "the deadline passed with the operator still writing",
      { outcome: "timeout", timeoutMs: 30_000, lastReason: "Service/hello not recreated yet" },
      "inconclusive",
      /^no verdict within 30 s of the deletion: the operator was still writing at the deadline \(last seen: Service\/hello not recreated yet\)$/,
    ],
  ])("%s", (_name, recreation, status, message) => {
    const verdict = deletedChild.judge(observation(recreation), contract);
    expect(verdict.status).toBe(status);
    expect(verdict.message).toMatch(message);
  });

  it("compares no field of a child the operator's clock made: the reference's is another tick's", () => {
    const verdict = deletedChild.judge({ ...observation(recreated("other")), ofClock: true }, contract);
    expect(verdict.status).toBe("passed");
    expect(verdict.evidence?.notes).toEqual([
      expect.stringMatching(/^not compared with the reference: the operator's clock made/),
    ]);
    expect(
      deletedChild.judge({ ...observation({ outcome: "gave-up" }), ofClock: true }, contract).status,
    ).toBe("failed");
  });

  it("names the field that differs, and shows the log of an operator that did not recreate", () => {
    expect(deletedChild.judge(observation(recreated("other")), contract).evidence?.diffs).toEqual([
      { object: "Service/hello", path: "spec.selector.app", expected: "hello", actual: "other" },
    ]);
    expect(deletedChild.judge(observation({ outcome: "gave-up" }), contract).evidence?.operatorLog).toEqual([
      "log line",
    ]);
  });

  it("reads each life's values in its own terms: the namespace, UIDs and life-dependent names in a value are the reference's", () => {
    const dns = {
      id: "Service/hello spec.selector.target",
      kind: "Service",
      name: "hello",
      path: ["spec", "selector", "target"],
      value: "db-1a2b.ref-ns.svc",
      perturbed: "x",
    };
    const recreatedWith = (target: string): Recreation => ({
      outcome: "recreated",
      object: { kind: "Service", metadata: { name: "hello", uid: "uid-2" }, spec: { selector: { target } } },
    });
    const judged = (target: string, readings: DeletedChildObservation["readings"]) =>
      deletedChild.judge({ ...observation(recreatedWith(target)), fields: [dns], readings }, contract).status;
    const readings = {
      reference: { namespace: "ref-ns", names: [["db-1a2b", "<Service/db-*>"]] as [string, string][] },
      here: { namespace: "rc-drift-deleted-9", names: [["db-77ff", "<Service/db-*>"]] as [string, string][] },
    };
    expect(judged("db-77ff.rc-drift-deleted-9.svc", readings)).toBe("passed");
    expect(judged("db-77ff.ref-ns.svc", readings)).toBe("failed");
    // Recorded before readings: compared as they are.
    expect(judged("db-77ff.rc-drift-deleted-9.svc", undefined)).toBe("failed");
    // With one reference life, a differing value may be one generated per life.
    const oneLife = deletedChild.judge(
      { ...observation(recreated("other")), oneLife: "the second reference life did not converge" },
      contract,
    );
    expect(oneLife.status).toBe("inconclusive");
    expect(oneLife.evidence?.diffs).toHaveLength(1);
  });

  it("has nothing to delete when the reference has no child", () => {
    const empty: SpecReference = {
      spec: 0,
      namespace: "ns",
      customResource: {},
      children: [],
      writes: [],
      specWrites: [],
    };
    const references = new Map([[0, empty]]);
    expect(deletedChild.targets({ contract, references })).toEqual({
      target: "children",
      skip: "the operator created no child on its way to the reference: nothing to delete",
    });
  });
});
