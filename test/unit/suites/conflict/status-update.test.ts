import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadContract, type Contract } from "../../../../src/contract/load-contract.js";
import type { DeliveredEvent } from "../../../../src/proxy/read-log.js";
import type { WriteEntry } from "../../../../src/proxy/write-log.js";
import type { LiveChild } from "../../../../src/scenario/reference-state.js";
import type { SpecReference } from "../../../../src/scenario/spec-references.js";
import {
  statusUpdate,
  type StatusUpdateObservation,
  type StatusUpdateRaced,
} from "../../../../src/suites/conflict/status-update.js";
import { writeEntry } from "../../../support/write-entry.js";

// The judge of conflict/status-update on observations built by hand, and its skips and target.
const root = join(import.meta.dirname, "../../../..");
let contract: Contract;
beforeAll(async () => {
  contract = await loadContract(join(root, "examples/webapp-operator/reconcile-conformance.yaml"));
});

const CR = { group: "demo.reconcile-conformance.dev", version: "v1alpha1", resource: "webapps" };
const UPDATE_2 = { spec: { port: 9090, args: ["--greeting=bonjour"] } };

function ready(observedGeneration?: number) {
  return {
    conditions: [
      { type: "Ready", status: "True", ...(observedGeneration === undefined ? {} : { observedGeneration }) },
    ],
  };
}

/** An operator status write of the custom resource (web) claiming Ready for `generation`. */
function statusWrite(
  seq: number,
  generation: number | undefined,
  fields: Partial<WriteEntry> = {},
): WriteEntry {
  return writeEntry({
    seq,
    ...CR,
    subresource: "status",
    sentResourceVersion: `${100 + seq}`,
    body: { metadata: { name: "web", generation: 99 }, status: ready(generation) },
    ...fields,
  });
}
/** An operator update of the Deployment web. */
const deploymentWrite = (seq: number, fields: Partial<WriteEntry> = {}) => writeEntry({ seq, ...fields });

/** The kit's update 2, written just before the operator's status write about update 1. */
const kitWrite = writeEntry({
  seq: 13,
  ...CR,
  actor: "kit",
  verb: "patch",
  resourceVersion: "105",
  generation: 3,
});
/** That status write, refused: it carried the resourceVersion it had read before update 2. */
const conflicted = statusWrite(14, 2, {
  sentResourceVersion: "100",
  code: 409,
  reason: "Conflict",
  effect: "rejected",
});
const resend = (seq: number) =>
  statusWrite(seq, 2, { sentResourceVersion: "100", code: 409, reason: "Conflict", effect: "rejected" });
const delivered = (beforeWriteSeq: number): DeliveredEvent => ({
  type: "MODIFIED",
  group: CR.group,
  resource: CR.resource,
  namespace: "ns",
  name: "web",
  resourceVersion: "105",
  beforeWriteSeq,
});

function service(app: string): LiveChild {
  return {
    ref: { apiVersion: "v1", kind: "Service", name: "hello", namespace: "ns" },
    group: "",
    resource: "services",
    uid: "uid-hello",
    resourceVersion: "1",
    object: { apiVersion: "v1", kind: "Service", metadata: { name: "hello" }, spec: { selector: { app } } },
  };
}

/** The reference of update 2: the Deployment created for the sample, updated for update 1 and for update 2. */
const reference = {
  namespace: "ns",
  specWrites: [
    { spec: 0, seq: 1 },
    { spec: 1, seq: 10 },
    { spec: 2, seq: 20 },
  ],
  writes: [
    deploymentWrite(2, { verb: "create", effect: "created", code: 201 }),
    deploymentWrite(11),
    statusWrite(12, 2),
    deploymentWrite(21),
    statusWrite(22, 3),
  ],
  children: [service("hello")],
};

function final(fields: { observedGeneration?: number; port?: number } = {}) {
  return {
    apiVersion: `${CR.group}/${CR.version}`,
    kind: "WebApp",
    metadata: { name: "web", generation: 3 },
    spec: { ...UPDATE_2.spec, port: fields.port ?? 9090 },
    status: ready("observedGeneration" in fields ? fields.observedGeneration : 3),
  };
}

/** The operator's writes: the sample's, update 1's, the raced status write, then update 2's Deployment write and its status. */
const scenarioWrites = (...after: WriteEntry[]): WriteEntry[] => [
  deploymentWrite(2, { verb: "create", effect: "created", code: 201 }),
  deploymentWrite(11),
  conflicted,
  ...after,
];
const inOrder = scenarioWrites(deploymentWrite(15), statusWrite(16, 3));

function raced(fields: Partial<StatusUpdateRaced> = {}): StatusUpdateRaced {
  return {
    outcome: "reached",
    hit: conflicted,
    kitWrite,
    update: UPDATE_2,
    writes: inOrder,
    specWrites: [
      { spec: 0, seq: 1, generation: 1 },
      { spec: 1, seq: 10, generation: 2 },
      { spec: 2, seq: 13, generation: 3 },
    ],
    final: final(),
    resubmits: { delivered: [delivered(15)], watchesKind: true },
    endState: [service("hello")],
    reference,
    operatorLog: ["log line"],
    ...fields,
  };
}

describe("conflict/status-update judge", () => {
  it.each<[string, () => StatusUpdateObservation, string, RegExp]>([
    [
      "a real 409, then Ready only once update 2's children are written",
      () => raced(),
      "passed",
      /^the status write got a real 409; 1 later status write\(s\), none claiming Ready before the children of its spec \(deployments\.apps\/web\) were written; it observes generation 3, update 2 kept, end state as the reference of update 2$/,
    ],
    [
      "the status write went through",
      () => {
        const accepted = statusWrite(14, 2);
        return raced({ hit: accepted, writes: inOrder.map((w) => (w === conflicted ? accepted : w)) });
      },
      "passed",
      /^the status write got answer 200; 1 later status write\(s\)/,
    ],
    [
      "a status that names no observedGeneration",
      () => raced({ final: final({ observedGeneration: undefined }) }),
      "passed",
      /^the status write got a real 409; .* \(deployments\.apps\/web\) were written; update 2 kept, end state as the reference of update 2$/,
    ],
    [
      "update 2 needed no child write",
      () => raced({ reference: { ...reference, writes: reference.writes.slice(0, 3) } }),
      "passed",
      /none claiming Ready before the children of its spec \(none needed\) were written/,
    ],
    [
      "a resend before the watch delivered update 2 (cache lag, not counted)",
      () =>
        raced({
          writes: [...inOrder, resend(17)],
          resubmits: { delivered: [delivered(18)], watchesKind: true },
        }),
      "passed",
      /^the status write got a real 409; 2 later status write\(s\)/,
    ],
    [
      "Ready claimed for update 2 before its Deployment write",
      () => raced({ writes: scenarioWrites(statusWrite(15, 3), deploymentWrite(16)) }),
      "failed",
      /^status write #15 claimed Ready for generation 3 \(spec 2\) before the operator wrote deployments\.apps\/web, which that spec needs$/,
    ],
    [
      "the final status observes an older generation",
      () => raced({ final: final({ observedGeneration: 2 }) }),
      "failed",
      /^the final status observes generation 2, the custom resource is at 3$/,
    ],
    [
      "a resend after the watch had delivered update 2",
      () =>
        raced({
          writes: [...inOrder, resend(17)],
          resubmits: { delivered: [delivered(15)], watchesKind: true },
        }),
      "failed",
      /^it resent resourceVersion 100, which had just conflicted, after its watch had delivered the concurrent update, in status write\(s\) #17$/,
    ],
    [
      "a resend by an operator that does not watch the custom resource",
      () => raced({ writes: [...inOrder, resend(17)], resubmits: { delivered: [], watchesKind: false } }),
      "failed",
      /^it resent resourceVersion 100, .* in status write\(s\) #17$/,
    ],
    [
      "update 2 overwritten",
      () => raced({ final: final({ port: 8080 }) }),
      "failed",
      /^the concurrent update 2 did not survive: spec\.port no longer as it set them$/,
    ],
    [
      "a managed field of a child differs from the reference",
      () => raced({ endState: [service("other")] }),
      "failed",
      /^against the reference of update 2: 1 managed field\(s\) differ from the reference$/,
    ],
    [
      "several problems at once",
      () => raced({ final: final({ observedGeneration: 2, port: 8080 }), endState: [] }),
      "failed",
      /^the final status observes generation 2, the custom resource is at 3; the concurrent update 2 did not survive: spec\.port no longer as it set them; against the reference of update 2: missing Service\/hello$/,
    ],
    [
      "no status write claimed Ready by the predicate",
      () => ({ outcome: "not-reached", writes: [deploymentWrite(11)] }),
      "inconclusive",
      /^the operator converged on update 1 without a status write that claims Ready by the contract's predicate: nothing to race with$/,
    ],
    [
      "the concurrent update could not be made",
      () => ({ outcome: "failed", error: "the patch was refused" }),
      "inconclusive",
      /^the concurrent update could not be made: the patch was refused$/,
    ],
  ])("%s", (_name, observation, status, message) => {
    const verdict = statusUpdate.judge(observation(), contract);
    expect(verdict.status).toBe(status);
    expect(verdict.message).toMatch(message);
  });

  it("with quiet readiness, waited for any status write", () => {
    const quiet: Contract = { ...contract, readiness: { kind: "quiet" } };
    const verdict = statusUpdate.judge({ outcome: "not-reached", writes: [deploymentWrite(11)] }, quiet);
    expect(verdict.status).toBe("inconclusive");
    expect(verdict.message).toBe(
      "the operator converged on update 1 without a status write: nothing to race with",
    );
    expect(verdict.evidence?.writes).toHaveLength(1);
  });

  it("notes the race, the spec writes and the claims; the log only on a failure", () => {
    const passed = statusUpdate.judge(raced(), contract);
    expect(passed.evidence?.notes).toEqual([
      "the kit wrote update 2 (write #13, generation 3) just before the operator's status update #14, which carried resourceVersion 100 and was answered 409 Conflict",
      "spec writes of this scenario: spec 0 = generation 1 (#1), spec 1 = generation 2 (#10), spec 2 = generation 3 (#13)",
      "1 status write(s) claimed Ready",
    ]);
    expect(passed.evidence?.writes?.map((w) => (w as { seq: number }).seq)).toEqual([2, 11, 13, 14, 15, 16]);
    expect(passed.evidence?.operatorLog).toBeUndefined();
    expect(
      statusUpdate.judge(raced({ final: final({ port: 8080 }) }), contract).evidence?.operatorLog,
    ).toEqual(["log line"]);
  });

  it("notes claims it could not place, resends its cache explains, and a status without observedGeneration", () => {
    const notes = (observation: StatusUpdateRaced) =>
      statusUpdate.judge(observation, contract).evidence?.notes;
    expect(notes(raced({ writes: [...inOrder, statusWrite(17, 7)] }))?.[2]).toBe(
      "2 status write(s) claimed Ready; 1 of them about no generation a spec write of this scenario produced, not judged for order",
    );
    expect(
      notes(
        raced({
          writes: [...inOrder, resend(17)],
          resubmits: { delivered: [delivered(18)], watchesKind: true },
        }),
      )?.[3],
    ).toMatch(
      /^write\(s\) #17 resent the conflicted resourceVersion before the operator's watch had delivered/,
    );
    expect(notes(raced({ final: final({ observedGeneration: undefined }) }))?.[3]).toMatch(
      /^the status names no observedGeneration: /,
    );
  });

  it("names the field that differs from the reference", () => {
    expect(statusUpdate.judge(raced({ endState: [service("other")] }), contract).evidence?.diffs).toEqual([
      { object: "Service/hello", path: "spec.selector.app", expected: "hello", actual: "other" },
    ]);
  });
});

describe("conflict/status-update target", () => {
  const spec2: SpecReference = { spec: 2, customResource: {}, ...reference };

  it("needs two updates, and the reference of the second", () => {
    expect(statusUpdate.skip?.({ ...contract, updates: contract.updates.slice(0, 1) })).toEqual({
      target: "contract",
      skip: "the contract has 1 update(s); this check needs two: the second races with the status write for the first",
    });
    expect(statusUpdate.skip?.(contract)).toBeUndefined();
    expect(statusUpdate.references?.(contract)).toEqual([2]);
  });

  it("is the status write for update 1, skipped when the reference wrote no status", () => {
    const references = new Map([[2, spec2]]);
    expect(statusUpdate.targets({ contract, references })).toEqual([spec2]);
    expect(statusUpdate.targetName(spec2)).toBe("status write for update 1");
    expect(statusUpdate.skipTarget?.(spec2, { contract, references })).toBeUndefined();
    const silent = { ...spec2, writes: reference.writes.filter((w) => w.resource !== CR.resource) };
    expect(statusUpdate.skipTarget?.(silent, { contract, references })).toBe(
      "the operator wrote no status on its way to the reference: nothing to race with",
    );
  });
});
