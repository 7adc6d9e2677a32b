import { describe, expect, it } from "vitest";
import { loadContract } from "../../../../src/contract/load-contract.js";
import type { Status } from "../../../../src/report/report-model.js";
import type { SpecReference } from "../../../../src/scenario/spec-references.js";
import type { Judgement } from "../../../../src/suites/check.js";
import {
  recreateSameName,
  type RecreateObservation,
} from "../../../../src/suites/idempotency/recreate-same-name.js";
import { service, serviceCreate, write } from "./fixtures.js";

const contract = await loadContract("examples/webapp-operator/reconcile-conformance.yaml");

describe("recreate-same-name: its target", () => {
  it("is one scenario, with the reference's children and custom resource UID", () => {
    const reference: SpecReference = {
      spec: 0,
      namespace: "ref",
      customResource: { apiVersion: "v1", kind: "WebApp", metadata: { name: "hello", uid: "cr-uid" } },
      children: [service()],
      writes: [],
      specWrites: [{ spec: 0, seq: 0 }],
    };
    const targets = recreateSameName.targets({ contract, references: new Map([[0, reference]]) });
    expect(targets).toEqual([{ children: reference.children, customResourceUid: "cr-uid" }]);
    if ("skip" in targets) throw new Error(targets.skip);
    expect(targets.map((t) => recreateSameName.targetName(t))).toEqual(["delete and recreate the sample"]);
  });
});

describe("recreate-same-name: the judge", () => {
  // The reference's Service is owned by its custom resource (cr-uid).
  const reference = { children: [service({ uid: "u-ref" })], customResourceUid: "cr-uid" };
  const observation = (fields: Partial<RecreateObservation> = {}): RecreateObservation => ({
    reference,
    oldUid: "old-cr",
    newUid: "new-cr",
    previousLife: [serviceCreate(2, "u-1")],
    writes: [serviceCreate(12, "u-2"), write({ seq: 13, verb: "patch", uid: "u-2" })],
    live: [service({ uid: "u-2", owner: "new-cr" })],
    operatorLog: ["reconciled"],
    ...fields,
  });
  const failedWithLog = (j: Judgement) => expect(j.evidence?.operatorLog).toEqual(["reconciled"]);

  const rows: {
    name: string;
    observation: RecreateObservation;
    status: Status;
    message: string;
    also?: (j: Judgement) => void;
  }[] = [
    {
      name: "children of the new life, owned by the new UID: passed",
      observation: observation(),
      status: "passed",
      message:
        "recreated under the same name, it converged with 1 child(ren) of the new life and touched nothing of the previous one",
      also: (j) => {
        expect(j.evidence?.notes).toEqual([
          "previous custom resource uid old-cr, new new-cr",
          "objects of the previous life: services/hello (u-1)",
        ]);
        expect(j.evidence?.writes).toHaveLength(2);
        expect(j.evidence?.operatorLog).toBeUndefined();
      },
    },
    {
      name: "the previous life's child taken over: failed",
      observation: observation({ live: [service({ uid: "u-1", owner: "new-cr" })] }),
      status: "failed",
      message: "after the recreation: Service/hello is the previous life's object (uid u-1), taken over",
      also: failedWithLog,
    },
    {
      name: "a fresh child owned by the old UID: failed",
      observation: observation({ live: [service({ uid: "u-2", owner: "old-cr" })] }),
      status: "failed",
      message: "after the recreation: Service/hello is not owned by the new custom resource (owners: old-cr)",
      also: failedWithLog,
    },
    {
      name: "a fresh child owned by nothing: failed",
      observation: observation({ live: [service({ uid: "u-2", owner: undefined })] }),
      status: "failed",
      message: "is not owned by the new custom resource (owners: none)",
    },
    {
      name: "an unowned child where the reference's is unowned too: passed",
      observation: observation({
        reference: { ...reference, children: [service({ uid: "u-ref", owner: undefined })] },
        live: [service({ uid: "u-2", owner: undefined })],
      }),
      status: "passed",
      message: "converged with 1 child(ren) of the new life",
    },
    {
      name: "an update of the previous life's object in the new life: failed",
      observation: observation({
        writes: [serviceCreate(12, "u-2"), write({ seq: 14, verb: "update", uid: "u-1" })],
      }),
      status: "failed",
      message: "after the recreation: update of services/hello from the previous life (write 14)",
      also: failedWithLog,
    },
    {
      name: "deleting the previous life's object, or a refused write to it: passed",
      observation: observation({
        writes: [
          serviceCreate(12, "u-2"),
          write({ seq: 14, verb: "delete", uid: "u-1", effect: "deleted" }),
          write({ seq: 15, verb: "update", uid: "u-1", code: 409, effect: "rejected" }),
        ],
      }),
      status: "passed",
      message: "touched nothing of the previous one",
    },
    {
      name: "not the reference's end state: failed, with the diffs",
      observation: observation({ live: [service({ uid: "u-2", owner: "new-cr", app: "other" })] }),
      status: "failed",
      message: "after the recreation: 1 managed field(s) differ from the reference",
      also: (j) => {
        failedWithLog(j);
        expect(j.evidence?.diffs).toEqual([
          expect.objectContaining({ object: "Service/hello", expected: "hello", actual: "other" }),
        ]);
      },
    },
    {
      name: "a child missing, nothing of the previous life: failed, listing none",
      observation: observation({ live: [], previousLife: [] }),
      status: "failed",
      message: "after the recreation: missing Service/hello",
      also: (j) => expect(j.evidence?.notes?.[1]).toBe("objects of the previous life: none"),
    },
    {
      name: "every problem, in order",
      observation: observation({
        live: [service({ uid: "u-2", owner: "old-cr", app: "other" })],
        writes: [write({ seq: 14, verb: "patch", uid: "u-1" })],
      }),
      status: "failed",
      message:
        "after the recreation: Service/hello is not owned by the new custom resource (owners: old-cr); patch of services/hello from the previous life (write 14); 1 managed field(s) differ from the reference",
    },
  ];
  it.each(rows)("$name", (row) => {
    const judgement = recreateSameName.judge(row.observation, contract);
    expect(judgement.status).toBe(row.status);
    expect(judgement.message).toContain(row.message);
    row.also?.(judgement);
  });
});
