import { describe, expect, it } from "vitest";
import {
  decideEffect,
  isEffective,
  type EffectFacts,
  type WriteEffect,
} from "../../../src/proxy/write-effect.js";

// The effect table. Each row is confirmed on a real API server by
// test/cluster/write-effects.test.ts; here the decision alone, exhaustively.
const rows: [string, EffectFacts, string][] = [
  ["create 201", { verb: "create", status: 201 }, "created"],
  [
    "update that removed the last finalizer of a terminating object (its rv does not move)",
    { verb: "update", status: 200, basedOn: "5", answeredResourceVersion: "5", releasedLastFinalizer: true },
    "deleted",
  ],
  [
    "patch that removed the last finalizer, unconditional",
    { verb: "patch", status: 200, answeredResourceVersion: "7", releasedLastFinalizer: true },
    "deleted",
  ],
  ["create answered 409 AlreadyExists", { verb: "create", status: 409 }, "rejected"],
  ["create never answered (dropped, hung)", { verb: "create", status: 0 }, "rejected"],
  ["create, dry run", { verb: "create", status: 201, dryRun: true }, "no-op"],
  ["SubjectAccessReview / token request", { verb: "create", status: 201, storesNothing: true }, "no-op"],
  [
    "update with precondition, rv unchanged",
    { verb: "update", status: 200, basedOn: "5", answeredResourceVersion: "5" },
    "no-op",
  ],
  [
    "update with precondition, rv moved",
    { verb: "update", status: 200, basedOn: "5", answeredResourceVersion: "6" },
    "changed",
  ],
  ["update 409", { verb: "update", status: 409, basedOn: "5" }, "rejected"],
  [
    "status update with precondition, moved",
    { verb: "update", subresource: "status", status: 200, basedOn: "5", answeredResourceVersion: "9" },
    "changed",
  ],
  [
    "patch conditioned by the proxy, unchanged",
    {
      verb: "patch",
      status: 200,
      basedOn: "7",
      prior: { exists: true, resourceVersion: "7" },
      answeredResourceVersion: "7",
    },
    "no-op",
  ],
  [
    "patch conditioned by the proxy, moved",
    {
      verb: "patch",
      status: 200,
      basedOn: "7",
      prior: { exists: true, resourceVersion: "7" },
      answeredResourceVersion: "8",
    },
    "changed",
  ],
  [
    "apply that creates (201)",
    { verb: "patch", status: 201, prior: { exists: false }, answeredResourceVersion: "3" },
    "created",
  ],
  ["PUT that creates (201)", { verb: "update", status: 201, answeredResourceVersion: "3" }, "created"],
  [
    "unconditional write, rv unchanged since the read",
    {
      verb: "patch",
      status: 200,
      prior: { exists: true, resourceVersion: "7" },
      answeredResourceVersion: "7",
    },
    "no-op",
  ],
  [
    "unconditional write, rv moved since the read",
    {
      verb: "patch",
      status: 200,
      prior: { exists: true, resourceVersion: "7" },
      answeredResourceVersion: "9",
    },
    "ambiguous",
  ],
  [
    "unconditional write, nothing read",
    { verb: "update", status: 200, answeredResourceVersion: "9" },
    "ambiguous",
  ],
  ["answer without a resourceVersion", { verb: "update", status: 200, basedOn: "5" }, "ambiguous"],
  [
    "patch, dry run",
    { verb: "patch", status: 200, dryRun: true, basedOn: "5", answeredResourceVersion: "5" },
    "no-op",
  ],
  [
    "delete of a live object",
    { verb: "delete", status: 200, prior: { exists: true, resourceVersion: "4" } },
    "deleted",
  ],
  [
    "delete that starts termination (finalizers)",
    {
      verb: "delete",
      status: 200,
      prior: { exists: true, resourceVersion: "4" },
      answeredResourceVersion: "5",
    },
    "deleted",
  ],
  [
    "delete of an object already terminating",
    {
      verb: "delete",
      status: 200,
      prior: { exists: true, resourceVersion: "5", terminating: true },
      answeredResourceVersion: "5",
    },
    "no-op",
  ],
  ["delete 404", { verb: "delete", status: 404, prior: { exists: false } }, "rejected"],
  ["deletecollection of some", { verb: "deletecollection", status: 200, deletedItems: 2 }, "deleted"],
  ["deletecollection of none", { verb: "deletecollection", status: 200, deletedItems: 0 }, "no-op"],
  ["deletecollection, answer unreadable", { verb: "deletecollection", status: 200 }, "ambiguous"],
];

describe("decideEffect", () => {
  it.each(rows)("%s", (_name, facts, effect) => {
    const decision = decideEffect(facts);
    expect(decision.effect).toBe(effect);
    if (effect !== "created" && effect !== "changed" && effect !== "deleted")
      expect(decision.why).toBeTruthy();
  });
});

describe("isEffective", () => {
  it.each<[WriteEffect, boolean]>([
    ["created", true],
    ["changed", true],
    ["deleted", true],
    ["no-op", false],
    ["rejected", false],
    // The proxy could not tell: never counted as a change.
    ["ambiguous", false],
  ])("%s -> %s", (effect, effective) => {
    expect(isEffective({ effect })).toBe(effective);
  });
});
