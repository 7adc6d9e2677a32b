import { describe, expect, it } from "vitest";
import type { ReferenceChild } from "../../../../src/scenario/spec-references.js";
import { answeredChildren, forWantOfChildren } from "../../../../src/suites/shared/no-children.js";

const child = (name: string, clock = false): ReferenceChild => ({
  ref: { apiVersion: "v1", kind: "ConfigMap", name, namespace: "ns" },
  group: "",
  resource: "configmaps",
  uid: `u-${name}`,
  resourceVersion: "1",
  object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name } },
  ...(clock
    ? {
        madeByClock: {
          seq: 9,
          time: "2026-12-07T12:00:05.000Z",
          clock: {
            quietSinceSeq: 8,
            quietSince: "2026-12-07T12:00:03.000Z",
            afterMs: 2_000,
            by: "queues" as const,
            pending: "a RequeueAfter",
          },
        },
      }
    : {}),
});

describe("answeredChildren", () => {
  const children = [child("registration"), child("hello-tick-1"), child("hello-tick-2", true)];

  it("leaves out what the clock made, and its family, without a horizon", () => {
    expect(answeredChildren({ children }, { clock: {} }).map((c) => c.ref.name)).toEqual(["registration"]);
  });

  it("keeps every child within a horizon: every life holds the ticks", () => {
    expect(answeredChildren({ children }, { clock: { horizonMs: 17_000 } })).toHaveLength(3);
  });
});

describe("forWantOfChildren", () => {
  it.each([
    ["plain", { children: [] }, /^none$/],
    [
      "its children came from its clock",
      { children: [child("t-1", true)] },
      /^none but those its clock made.*clock\.horizon/,
    ],
    [
      "a delayed requeue pending at convergence",
      { children: [], delayedRequeue: true as const },
      /^none; its last reconcile had asked for a delayed requeue.*clock\.horizon/,
    ],
  ])("%s", (_name, reference, expected) => {
    expect(forWantOfChildren(reference, "none")).toMatch(expected);
  });
});
