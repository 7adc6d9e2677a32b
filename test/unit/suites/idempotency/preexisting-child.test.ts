import { describe, expect, it } from "vitest";
import { loadContract } from "../../../../src/contract/load-contract.js";
import type { Status } from "../../../../src/report/report-model.js";
import type { SpecReference } from "../../../../src/scenario/spec-references.js";
import type { Judgement } from "../../../../src/suites/check.js";
import {
  preexistingChild,
  type PreexistingChildObservation,
  type PreexistingChildTarget,
} from "../../../../src/suites/idempotency/preexisting-child.js";
import { driftTargets } from "../../../../src/suites/shared/drift-targets.js";
import { service, write } from "./fixtures.js";

const contract = await loadContract("examples/webapp-operator/reconcile-conformance.yaml");
const UID = "0f9e6c1a-3b2d-4c5e-8f7a-112233445566";

function context(children: SpecReference["children"], readiness = contract.readiness) {
  const reference: SpecReference = {
    spec: 0,
    namespace: "ref",
    customResource: {},
    children,
    writes: [],
    specWrites: [{ spec: 0, seq: 0 }],
  };
  return { contract: { ...contract, readiness }, references: new Map([[0, reference]]) };
}

function targetsOf(children: SpecReference["children"]): PreexistingChildTarget[] {
  const targets = preexistingChild.targets(context(children));
  if ("skip" in targets) throw new Error(`skipped: ${targets.skip}`);
  return [...targets];
}

describe("preexisting-child: its targets and their skips", () => {
  it("is skipped when the reference has no child", () => {
    expect(preexistingChild.targets(context([]))).toEqual({
      target: "children",
      skip: "the operator created no child on its way to the reference: none can exist first",
    });
  });

  it("has one target per child, named by kind and normalised name, with its managed fields", () => {
    const [target] = targetsOf([service()]);
    expect(target && preexistingChild.targetName(target)).toBe("Service/hello");
    expect(target?.fields.length).toBeGreaterThan(0);
  });

  const bare = service();
  // A Service with no spec: nothing of it to set otherwise.
  const noFields = { ...bare, object: { apiVersion: "v1", kind: "Service", metadata: bare.object.metadata } };
  it.each([
    {
      name: "quiet readiness",
      child: service(),
      readiness: { kind: "quiet" as const },
      why: "the contract's readiness is `quiet`: the custom resource reports no readiness to judge",
    },
    {
      name: "a cluster-scoped child",
      child: service({ namespace: "" }),
      why: "a cluster-scoped child is shared by every namespace's scenarios",
    },
    {
      name: "a name derived from the custom resource's UID",
      child: service({ name: `hello-${UID}` }),
      why: "its name derives from the custom resource's UID, unknown before the custom resource exists",
    },
    {
      name: "a child with no managed field",
      child: noFields,
      why: "no field of it the operator manages to set otherwise",
    },
    { name: "a namespaced child of a known name with managed fields", child: service(), why: undefined },
  ])("skipTarget: $name", ({ child, readiness, why }) => {
    const ctx = context([child], readiness);
    const [target] = targetsOf([child]);
    expect(target && preexistingChild.skipTarget?.(target, ctx)).toBe(why);
  });
});

describe("preexisting-child: the judge", () => {
  const fields = driftTargets({ kind: "Service", object: service().object }, contract.drift);
  const diff = {
    object: "Service/hello",
    path: "spec.selector.app",
    expected: "hello",
    actual: "hello-drift",
  };
  const { group, resource } = contract.customResource;
  const cr = { group, resource, verb: "update" as const, subresource: "status", name: "hello" };
  const statusWrite = (seq: number, ready: "True" | "False") =>
    write({
      ...cr,
      seq,
      body: {
        metadata: { generation: 1 },
        status: { conditions: [{ type: "Ready", status: ready, observedGeneration: 1 }] },
      },
    });
  const observation = (fields_: Partial<PreexistingChildObservation> = {}): PreexistingChildObservation => ({
    name: "Service/hello",
    child: { group: "", resource: "services", name: "hello" },
    fields,
    writes: [write({ seq: 4 }), statusWrite(5, "True")],
    operatorLog: ["reconciled"],
    last: { ready: true, reason: "Ready=True", diffs: [] },
    ...fields_,
  });
  const failedWithLog = (j: Judgement) => expect(j.evidence?.operatorLog).toEqual(["reconciled"]);

  const rows: {
    name: string;
    observation: PreexistingChildObservation;
    status: Status;
    message: string;
    also?: (j: Judgement) => void;
  }[] = [
    {
      name: "seen ready while the child differed: failed, with the diffs",
      observation: observation({
        readyWhileDiffering: { ready: true, reason: "Ready=True", diffs: [diff], at: 1250 },
      }),
      status: "failed",
      message:
        "ready (Ready=True) 1.3 s after the sample was created, while 1 field(s) of the pre-existing child still differed from the reference",
      also: (j) => {
        failedWithLog(j);
        expect(j.evidence?.diffs).toEqual([diff]);
      },
    },
    {
      name: "a status write claimed Ready before the child's repair: failed",
      observation: observation({
        writes: [statusWrite(3, "False"), statusWrite(4, "True"), write({ seq: 6 })],
      }),
      status: "failed",
      message: `status write #4 claimed Ready before the operator's first write to the pre-existing child, which was then still the kit's copy (${fields.length} field(s) differing from the reference)`,
      also: failedWithLog,
    },
    {
      name: "repaired, then ready: passed",
      observation: observation(),
      status: "passed",
      message: "it fixed the pre-existing child before it reported ready",
    },
    {
      name: "repaired, not ready at the end: passed",
      observation: observation({ last: { ready: false, reason: "Ready=False", diffs: [] } }),
      status: "passed",
      message: "it fixed the pre-existing child; not ready when the kit stopped watching (Ready=False)",
    },
    {
      name: "never ready, the child left as it was: passed",
      observation: observation({
        writes: [],
        last: { ready: false, reason: "Ready=False", diffs: [diff, diff] },
      }),
      status: "passed",
      message:
        "never ready while the child differed (Ready=False; 2 field(s) still differ): it did not take the foreign child for its own",
    },
    {
      name: "no poll at all: passed, nothing known",
      observation: (({ last: _last, ...rest }) => ({ ...rest, writes: [] }))(observation()),
      status: "passed",
      message: "never ready while the child differed (?; ? field(s) still differ)",
    },
  ];
  it.each(rows)("$name", (row) => {
    const judgement = preexistingChild.judge(row.observation, contract);
    expect(judgement.status).toBe(row.status);
    expect(judgement.message).toContain(row.message);
    expect(judgement.evidence?.notes?.[0]).toMatch(
      /^pre-existing Service\/hello created by the kit with: spec\./,
    );
    if (row.status === "passed") expect(judgement.evidence?.operatorLog).toBeUndefined();
    row.also?.(judgement);
  });
});
