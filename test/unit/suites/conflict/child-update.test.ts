import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadContract, type Contract } from "../../../../src/contract/load-contract.js";
import type { DeliveredEvent } from "../../../../src/proxy/read-log.js";
import type { WriteEntry } from "../../../../src/proxy/write-log.js";
import type { LiveChild } from "../../../../src/scenario/reference-state.js";
import type { SpecReference } from "../../../../src/scenario/spec-references.js";
import {
  childUpdate,
  MAX_CONFLICTS,
  type ChildUpdateObservation,
  type ChildUpdateRaced,
} from "../../../../src/suites/conflict/child-update.js";
import { writeEntry } from "../../../support/write-entry.js";

// The judge of conflict/child-update on observations built by hand, and its skips and targets.
const root = join(import.meta.dirname, "../../../..");
let contract: Contract;
beforeAll(async () => {
  contract = await loadContract(join(root, "examples/webapp-operator/reconcile-conformance.yaml"));
});

const ANNOTATION = "reconcile-conformance.dev/concurrent-write";
const VALUE = "abcd1234";

/** The reference's update of the Deployment after update 1: the write raced with. */
const target = writeEntry({ seq: 7, name: "web", sentResourceVersion: "50" });
/** The kit's annotation, written just before the operator's update. */
const kitWrite = writeEntry({ seq: 10, actor: "kit", verb: "patch", resourceVersion: "105" });
/** The operator's update, refused: it carried the resourceVersion it had read before the kit's write. */
const conflicted = writeEntry({
  seq: 11,
  sentResourceVersion: "100",
  code: 409,
  reason: "Conflict",
  effect: "rejected",
});
/** Its retry on a fresh read. */
const retry = writeEntry({ seq: 12, sentResourceVersion: "105" });
/** A retry that resent the conflicted resourceVersion. */
const resend = (seq: number): WriteEntry =>
  writeEntry({ seq, sentResourceVersion: "100", code: 409, reason: "Conflict", effect: "rejected" });
const delivered = (beforeWriteSeq: number): DeliveredEvent => ({
  type: "MODIFIED",
  group: "apps",
  resource: "deployments",
  namespace: "ns",
  name: "web",
  resourceVersion: "105",
  beforeWriteSeq,
});

function service(app: string, name = "hello"): LiveChild {
  return {
    ref: { apiVersion: "v1", kind: "Service", name, namespace: "ns" },
    group: "",
    resource: "services",
    uid: `uid-${name}`,
    resourceVersion: "1",
    object: { apiVersion: "v1", kind: "Service", metadata: { name }, spec: { selector: { app } } },
  };
}

function deployment(annotation?: string) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "web",
      ...(annotation === undefined ? {} : { annotations: { [ANNOTATION]: annotation } }),
    },
  };
}

function raced(fields: Partial<ChildUpdateRaced> = {}): ChildUpdateRaced {
  return {
    outcome: "reached",
    name: "web",
    value: VALUE,
    hit: conflicted,
    kitWrite,
    objectWrites: [conflicted, retry],
    resubmits: { delivered: [delivered(12)], watchesKind: true },
    live: deployment(VALUE),
    endState: [service("hello")],
    referenceChildren: [service("hello")],
    operatorLog: ["log line"],
    ...fields,
  };
}

const withoutKitWrite = (fields: Partial<ChildUpdateRaced> = {}): ChildUpdateRaced => {
  const { kitWrite: _kitWrite, ...rest } = raced(fields);
  return rest;
};
const withoutLive = (): ChildUpdateRaced => {
  const { live: _live, ...rest } = raced();
  return rest;
};

describe("conflict/child-update judge", () => {
  it.each<[string, () => ChildUpdateObservation, string, RegExp]>([
    [
      "a real 409, one retry on a fresh read",
      () => raced(),
      "passed",
      /^the update got a real 409; the operator wrote again 1 time\(s\) on a fresh read, kept the concurrent writer's annotation and converged to the reference of update 1$/,
    ],
    [
      "the write with a precondition went through, no retry",
      () => raced({ hit: retry, objectWrites: [retry] }),
      "passed",
      /^the update got answer 200; the operator did not write again, kept the concurrent writer's annotation/,
    ],
    [
      "no precondition: the write went through on top of the annotation",
      () => {
        const unconditioned = writeEntry({
          seq: 11,
          proxyPrecondition: { resourceVersion: "105", attempts: 2 },
        });
        return raced({ hit: unconditioned, objectWrites: [unconditioned] });
      },
      "passed",
      /^no precondition writes: the operator's update went through on top of the concurrent change and kept its annotation; converged to the reference of update 1$/,
    ],
    [
      "a resend before the watch delivered the change (cache lag, not counted)",
      () =>
        raced({
          objectWrites: [conflicted, resend(12), retry],
          resubmits: { delivered: [delivered(13)], watchesKind: true },
        }),
      "passed",
      /^the update got a real 409; the operator wrote again 2 time\(s\) on a fresh read/,
    ],
    [
      "a resend after the watch had delivered the change",
      () =>
        raced({
          objectWrites: [conflicted, resend(13), retry],
          resubmits: { delivered: [delivered(12)], watchesKind: true },
        }),
      "failed",
      /^it resent resourceVersion 100, which had just conflicted, 1 time\(s\) after its watch had delivered the concurrent change \(write\(s\) #13\): the retry reused the object it read before the conflict$/,
    ],
    [
      "a resend by an operator that does not watch the kind",
      () =>
        raced({
          objectWrites: [conflicted, resend(13), retry],
          resubmits: { delivered: [], watchesKind: false },
        }),
      "failed",
      /^it resent resourceVersion 100, which had just conflicted, 1 time\(s\) after its watch had delivered the concurrent change \(write\(s\) #13\)/,
    ],
    ["the child is gone", withoutLive, "failed", /^deployments\/web is gone$/],
    [
      "the annotation erased by the operator's retry (its no-op write not blamed)",
      () =>
        raced({
          live: deployment(),
          objectWrites: [conflicted, retry, writeEntry({ seq: 13, verb: "patch", effect: "no-op" })],
        }),
      "failed",
      /^the concurrent writer's annotation reconcile-conformance\.dev\/concurrent-write=abcd1234 is gone: erased by the operator's write\(s\) #12 \(update\)$/,
    ],
    [
      "the annotation overwritten, no effective write to blame",
      () => raced({ live: deployment("other"), objectWrites: [conflicted] }),
      "failed",
      /^the concurrent writer's annotation reconcile-conformance\.dev\/concurrent-write=abcd1234 is now other: erased by the operator's write\(s\) after it$/,
    ],
    [
      "more conflicts than a learning retry makes",
      () =>
        raced({
          objectWrites: [
            conflicted,
            ...Array.from({ length: MAX_CONFLICTS }, (_, i) =>
              writeEntry({ seq: 20 + i, sentResourceVersion: `${200 + i}`, code: 409, effect: "rejected" }),
            ),
            retry,
          ],
        }),
      "failed",
      /^11 conflicts on deployments\/web after one concurrent write$/,
    ],
    [
      "a managed field of a child differs from the reference",
      () => raced({ endState: [service("other")] }),
      "failed",
      /^against the reference of update 1: 1 managed field\(s\) differ from the reference$/,
    ],
    [
      "a child of the reference is missing, another is extra",
      () => raced({ endState: [service("hello", "extra"), service("hello", "extra-2")] }),
      "failed",
      /^against the reference of update 1: 2 Service\(s\) where the reference has 1 \(extra, extra-2\); missing Service\/hello$/,
    ],
    [
      "several problems at once",
      () => raced({ live: deployment(), endState: [] }),
      "failed",
      /^the concurrent writer's annotation .* is gone: erased by the operator's write\(s\) #12 \(update\); against the reference of update 1: missing Service\/hello$/,
    ],
    [
      "no kit write recorded: nothing to judge resends against",
      () =>
        withoutKitWrite({
          objectWrites: [conflicted, resend(13)],
          resubmits: { delivered: [], watchesKind: false },
        }),
      "passed",
      /^the update got a real 409; the operator wrote again 1 time\(s\) on a fresh read/,
    ],
    [
      "the operator converged without the reference's write",
      () => ({ outcome: "not-reached", target, name: "web", writes: [retry] }),
      "inconclusive",
      /^the operator converged on update 1 without writing deployments\/web, which the reference updated: nothing to race with$/,
    ],
    [
      "the concurrent write could not be made",
      () => ({ outcome: "failed", error: "the patch was refused" }),
      "inconclusive",
      /^the concurrent write could not be made: the patch was refused$/,
    ],
    [
      "the operator's first write was not the reference's",
      () => ({ outcome: "diverged", target, name: "web", hit: writeEntry({ seq: 11, verb: "delete" }) }),
      "inconclusive",
      /^the operator's first write to deployments\/web after update 1 was not the reference's$/,
    ],
  ])("%s", (_name, observation, status, message) => {
    const verdict = childUpdate.judge(observation(), contract);
    expect(verdict.status).toBe(status);
    expect(verdict.message).toMatch(message);
  });

  it("shows the kit's write, the operator's, what the race was and the log of a failure", () => {
    const passed = childUpdate.judge(raced(), contract);
    expect(passed.evidence?.writes?.map((w) => (w as { seq: number }).seq)).toEqual([10, 11, 12]);
    expect(passed.evidence?.notes).toEqual([
      `while the operator converged update 1, the kit wrote ${ANNOTATION}=${VALUE} on deployments/web (write #10, answered 200) just before the operator's update #11, which carried resourceVersion 100 and was answered 409 Conflict`,
    ]);
    expect(passed.evidence?.operatorLog).toBeUndefined();
    expect(childUpdate.judge(raced({ live: deployment() }), contract).evidence?.operatorLog).toEqual([
      "log line",
    ]);
  });

  it("notes a write without precondition, and a resend its cache explains", () => {
    const unconditioned = writeEntry({ seq: 11, proxyPrecondition: { resourceVersion: "105", attempts: 2 } });
    expect(
      childUpdate.judge(raced({ hit: unconditioned, objectWrites: [unconditioned] }), contract).evidence
        ?.notes,
    ).toEqual([
      `while the operator converged update 1, the kit wrote ${ANNOTATION}=${VALUE} on deployments/web (write #10, answered 200) just before the operator's update #11, which carried no resourceVersion (the proxy applied it on the state it read, after the kit's write, in 2 attempt(s)) and was answered 200`,
      "no precondition writes",
    ]);
    const lagged = raced({
      objectWrites: [conflicted, resend(12), retry],
      resubmits: { delivered: [delivered(13)], watchesKind: true },
    });
    expect(childUpdate.judge(lagged, contract).evidence?.notes?.[1]).toMatch(
      /^write\(s\) #12 resent the conflicted resourceVersion before the operator's watch had delivered the concurrent change/,
    );
  });

  it("names the field that differs from the reference", () => {
    expect(childUpdate.judge(raced({ endState: [service("other")] }), contract).evidence?.diffs).toEqual([
      { object: "Service/hello", path: "spec.selector.app", expected: "hello", actual: "other" },
    ]);
  });

  it("shows the reference's write first when the operator never made it", () => {
    const verdict = childUpdate.judge(
      { outcome: "not-reached", target, name: "web", writes: [retry] },
      contract,
    );
    expect(verdict.evidence?.writes?.map((w) => (w as { seq: number }).seq)).toEqual([7, 12]);
    expect(verdict.evidence?.notes).toEqual(["first write: the reference's; the rest: this scenario's"]);
  });
});

describe("conflict/child-update targets", () => {
  it("skips a contract with no update, and asks for the reference of update 1 otherwise", () => {
    expect(childUpdate.skip?.({ ...contract, updates: [] })).toEqual({
      target: "contract",
      skip: "the contract has no update: nothing makes the operator write a child",
    });
    expect(childUpdate.skip?.(contract)).toBeUndefined();
    expect(childUpdate.references?.(contract)).toEqual([1]);
  });

  const reference = (writes: WriteEntry[]): SpecReference => ({
    spec: 1,
    namespace: "ns",
    customResource: {},
    children: [],
    specWrites: [
      { spec: 0, seq: 1 },
      { spec: 1, seq: 5 },
    ],
    writes,
  });

  it("races with each child kind the reference updated after update 1, named by kind, name and verb", () => {
    const references = new Map([
      [1, reference([writeEntry({ seq: 6, name: "web-abc" }), writeEntry({ seq: 8, name: "web-abc" })])],
    ]);
    const targets = childUpdate.targets({ contract, references }) as readonly WriteEntry[];
    expect(targets.map((t) => [t.seq, childUpdate.targetName(t)])).toEqual([
      [6, "deployments.apps/web-abc (update)"],
    ]);
  });

  it("has nothing to race with when the reference updated no existing child", () => {
    const references = new Map([[1, reference([writeEntry({ seq: 6, verb: "create", effect: "created" })])]]);
    expect(childUpdate.targets({ contract, references })).toEqual({
      target: "update 1",
      skip: "the reference updated no existing child for update 1: nothing to race with",
    });
  });
});
