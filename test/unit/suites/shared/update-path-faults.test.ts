import { describe, expect, it } from "vitest";
import { loadContract } from "../../../../src/contract/load-contract.js";
import type { LiveChild } from "../../../../src/scenario/reference-state.js";
import type { SpecReference } from "../../../../src/scenario/spec-references.js";
import { crashAfterCreate } from "../../../../src/suites/idempotency/crash-after-create.js";
import { crashAfterWrite } from "../../../../src/suites/idempotency/crash-after-write.js";
import type { CrashLineObservation } from "../../../../src/suites/idempotency/crash-line-scenario.js";
import { ownCreateUnseen } from "../../../../src/suites/staleness/own-create-unseen.js";
import { restartFromThePast } from "../../../../src/suites/staleness/restart-from-the-past.js";
import { KILL, service, serviceCreate, write } from "../idempotency/fixtures.js";

// The faults on the way to an update (update-paths.ts): the crash sweep's targets, and what its
// judge counts as lost when the update itself removes or replaces a child; the staleness checks'
// targets there.

const contract = await loadContract("examples/webapp-operator/reconcile-conformance.yaml");

const configMap = (name: string, uid: string): LiveChild => ({
  ref: { apiVersion: "v1", kind: "ConfigMap", name, namespace: "ns" },
  group: "",
  resource: "configmaps",
  uid,
  resourceVersion: "3",
  object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "ns", uid }, data: {} },
});

/** Spec 0's reference and update 1's, whose way updates the Service and deletes ConfigMap extra. */
function references(): Map<number, SpecReference> {
  const zero: SpecReference = {
    spec: 0,
    namespace: "ref",
    customResource: {},
    children: [service(), configMap("extra", "c-0")],
    writes: [
      write({ seq: 2, namespace: "ref", verb: "create", code: 201, effect: "created" }),
      write({
        seq: 3,
        namespace: "ref",
        verb: "create",
        resource: "configmaps",
        name: "extra",
        code: 201,
        effect: "created",
      }),
    ],
    specWrites: [{ spec: 0, seq: 1 }],
  };
  const one: SpecReference = {
    ...zero,
    spec: 1,
    children: [service()],
    writes: [
      ...zero.writes,
      write({ seq: 11, namespace: "ref", verb: "update" }),
      write({ seq: 12, namespace: "ref", verb: "patch" }),
      write({
        seq: 13,
        namespace: "ref",
        verb: "delete",
        resource: "configmaps",
        name: "extra",
        effect: "deleted",
      }),
    ],
    specWrites: [...zero.specWrites, { spec: 1, seq: 10 }],
  };
  return new Map([
    [0, zero],
    [1, one],
  ]);
}

describe("the crash sweep on the way to an update: its targets", () => {
  it("adds the first write of each kind on each update's way, named after the update", () => {
    const targets = crashAfterWrite.targets({ contract, references: references() });
    if ("skip" in targets) throw new Error(targets.skip);
    expect(targets.map((t) => crashAfterWrite.targetName(t))).toEqual([
      "update 1: update services/hello",
      "update 1: patch services/hello",
      "update 1: delete configmaps/extra",
    ]);
    const [first] = targets;
    expect(first?.path).toEqual({ spec: 1, name: "update 1", replaced: ["configmaps/extra"] });
    expect(first?.reference.map((c) => c.ref.name)).toEqual(["hello"]);
    expect(first?.learnedFrom?.map((c) => c.ref.name)).toEqual(["hello", "extra"]);
    expect(crashAfterWrite.observer.scenarioOf?.(first!)).toBe("crash-s1-1");
  });

  it("adds nothing when the contract's budget says none, and asks for the references it sweeps", () => {
    const none = { ...contract, updateFaults: { lines: "none" as const, generatedUpdates: 2 } };
    const targets = crashAfterCreate.targets({ contract: none, references: references() });
    if ("skip" in targets) throw new Error(targets.skip);
    expect(targets.map((t) => crashAfterCreate.targetName(t))).toEqual([
      "create services/hello",
      "create configmaps/extra",
    ]);
    expect(crashAfterCreate.references?.(none)).toEqual([0]);
    expect(crashAfterCreate.references?.(contract)).toEqual([0, 1, 2]);
  });
});

describe("the crash sweep on the way to an update: the judge", () => {
  const hit = write({ seq: 21, verb: "update" });
  const observation = (live: LiveChild[], replaced: string[] = []): CrashLineObservation => ({
    restarted: true,
    line: {
      ordinal: 1,
      id: "update services/hello",
      meaning: "update services/hello",
      occurrence: 1,
      write: hit,
    },
    crash: { status: "crashed", hit, kill: KILL, proof: ["crash after write 21"] },
    reference: [service({ uid: "u-ref" })],
    path: { spec: 1, name: "update 1", replaced },
    learnedFrom: [service({ uid: "u-ref" })],
    live,
    writes: [
      serviceCreate(3, "u-1"),
      write({ seq: 4, verb: "create", resource: "configmaps", name: "extra", effect: "created", uid: "c-1" }),
      hit,
    ],
    operatorLog: ["reconciled"],
  });

  it("passes when what the update removes is gone, and says so", () => {
    const judgement = crashAfterWrite.judge(observation([service({ uid: "u-1" })]), contract);
    expect(judgement.status).toBe("passed");
    expect(judgement.message).toContain("converged to the reference of update 1");
    expect(judgement.evidence?.notes).toContain(
      "not counted as lost: configmaps/extra: the reference of update 1 has no configmaps/extra (the update removes it)",
    );
  });

  it("fails when a child the update keeps was deleted and made again", () => {
    const judgement = crashAfterWrite.judge(observation([service({ uid: "u-2" })]), contract);
    expect(judgement.status).toBe("failed");
    expect(judgement.message).toBe(
      "after the crash on the way to update 1 and restart: services/hello was recreated (uid u-1 -> u-2)",
    );
  });

  it("does not count a recreation the reference made on the same way", () => {
    const judgement = crashAfterWrite.judge(
      observation([service({ uid: "u-2" })], ["services/hello"]),
      contract,
    );
    expect(judgement.status).toBe("passed");
    expect(judgement.evidence?.notes).toContain(
      "not counted as recreated: services/hello: the reference deleted services/hello on its way to update 1 too",
    );
  });
});

describe("after a crash, every field the operator manages", () => {
  /** Service hello with an annotation the operator manages, set only when its create reports "created". */
  const annotated = (uid: string, annotation: boolean): LiveChild => {
    const plain = service({ uid });
    const object = plain.object as { metadata: Record<string, unknown> };
    const [managed] = object.metadata.managedFields as { fieldsV1: Record<string, unknown> }[];
    return {
      ...plain,
      object: {
        ...object,
        metadata: {
          ...object.metadata,
          ...(annotation ? { annotations: { "demo/welcomed": "yes" } } : {}),
          managedFields: [
            {
              ...managed,
              fieldsV1: {
                ...managed?.fieldsV1,
                ...(annotation ? { "f:metadata": { "f:annotations": { "f:demo/welcomed": {} } } } : {}),
              },
            },
          ],
        },
      },
    };
  };

  it("fails when an annotation the reference has is lost to the crash, naming it", () => {
    const hit = write({ seq: 5, verb: "create", code: 201, effect: "created", uid: "u-1" });
    const judgement = crashAfterCreate.judge(
      {
        restarted: true,
        line: { ordinal: 1, id: "create services/hello", write: hit },
        crash: { status: "crashed", hit, kill: KILL, proof: ["crash after write 5"] },
        reference: [annotated("u-ref", true)],
        live: [annotated("u-1", false)],
        writes: [hit],
        operatorLog: [],
      },
      contract,
    );
    expect(judgement.status).toBe("failed");
    expect(judgement.evidence?.diffs).toEqual([
      { object: "Service/hello", path: 'metadata.annotations["demo/welcomed"]', expected: "yes" },
    ]);
  });
});

describe("the staleness checks on the way to an update: their targets", () => {
  it("restart-from-the-past: every line the budget chooses but status writes, after the sample's creates", () => {
    const targets = restartFromThePast.targets({ contract, references: references() });
    if ("skip" in targets) throw new Error(targets.skip);
    expect(targets.map((t) => restartFromThePast.targetName(t))).toEqual([
      "create services/hello",
      "create configmaps/extra",
      "update 1: update services/hello",
      "update 1: patch services/hello",
      "update 1: delete configmaps/extra",
    ]);
    expect(restartFromThePast.observer.scenarioOf?.(targets[4]!)).toBe("past-s1-3");
  });

  it("own-create-unseen: each kind the update's way creates or deletes, besides every kind of the sample's", () => {
    const targets = ownCreateUnseen.targets({ contract, references: references() });
    if ("skip" in targets) throw new Error(targets.skip);
    expect(targets.map((t) => ownCreateUnseen.targetName(t))).toEqual([
      "services",
      "configmaps",
      "update 1: configmaps",
    ]);
    expect(targets[2]?.path).toEqual({ spec: 1, name: "update 1", replaced: ["configmaps/extra"] });
  });
});
