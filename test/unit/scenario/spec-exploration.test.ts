import { describe, expect, it } from "vitest";
import { compileCelReadiness } from "../../../src/contract/readiness.js";
import type { SpecCandidate } from "../../../src/contract/spec-candidates.js";
import { withoutReadinessField, type Checked } from "../../../src/scenario/spec-exploration.js";
import { mergePatchBetween } from "../../../src/scenario/spec-references.js";
import { applyMergePatch } from "../../../src/util/records.js";

const candidate = (field: string, change: SpecCandidate["change"]): Checked => ({
  candidate: { path: ["spec", field], change, patch: {}, description: `spec.${field} ${change}` },
  accepted: true,
});

describe("withoutReadinessField", () => {
  const readiness = compileCelReadiness("self.status.availableReplicas == self.spec.replicas");

  it("drops the removal of a field the contract's readiness reads, with why", () => {
    expect(withoutReadinessField(candidate("replicas", "remove"), readiness)).toMatchObject({
      accepted: false,
      reason:
        "the contract's readiness reads spec.replicas: without it, whether the custom resource is ready could not be told",
    });
  });

  it("keeps its change, the removal of another field, and every candidate under another readiness", () => {
    expect(withoutReadinessField(candidate("replicas", "value"), readiness).accepted).toBe(true);
    expect(withoutReadinessField(candidate("replica", "remove"), readiness).accepted).toBe(true);
    expect(withoutReadinessField(candidate("replicas", "remove"), { kind: "conditions" }).accepted).toBe(
      true,
    );
  });
});

describe("mergePatchBetween", () => {
  it.each([
    [
      { a: 1, b: { c: 2, d: 3 }, l: [1, 2] },
      { a: 1, b: { c: 4 }, l: [1], e: true },
    ],
    [{ deploymentName: "x", replicas: 3 }, { replicas: 3 }],
    [{}, { settings: { k: "v" } }],
  ])("turns %j into %j", (from, to) => {
    expect(applyMergePatch(from, mergePatchBetween(from, to))).toEqual(to);
  });
});
