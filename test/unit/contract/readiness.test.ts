import { describe, expect, it } from "vitest";
import { CelCompileError, compileCelReadiness, evaluateReadiness } from "../../../src/contract/readiness.js";

const object = (status: unknown, generation = 2) => ({
  metadata: { generation },
  spec: { replicas: 3 },
  status,
});
const ready = (status = "True", extra: object = {}) => ({ type: "Ready", status, ...extra });

describe("readiness: conditions", () => {
  it.each([
    [
      "Ready True, status-level observedGeneration current",
      object({ observedGeneration: 2, conditions: [ready()] }),
      true,
    ],
    [
      "Ready True, observed an older generation",
      object({ observedGeneration: 1, conditions: [ready()] }),
      false,
    ],
    [
      "Ready True, condition-level observedGeneration current",
      object({ observedGeneration: 1, conditions: [ready("True", { observedGeneration: 2 })] }),
      true,
    ],
    [
      "Ready True, condition-level observedGeneration older",
      object({ observedGeneration: 2, conditions: [ready("True", { observedGeneration: 1 })] }),
      false,
    ],
    ["Ready False", object({ observedGeneration: 2, conditions: [ready("False")] }), false],
    [
      "Available True when there is no Ready",
      object({ observedGeneration: 2, conditions: [{ type: "Available", status: "True" }] }),
      true,
    ],
    [
      "Ready False wins over Available True",
      object({ conditions: [ready("False"), { type: "Available", status: "True" }] }),
      false,
    ],
    ["no observedGeneration anywhere", object({ conditions: [ready()] }), true],
    ["no conditions", object({ observedGeneration: 2 }), false],
    ["no status", object(undefined), false],
  ])("%s", (_name, resource, expected) => {
    const result = evaluateReadiness({ kind: "conditions" }, resource);
    expect(result.ready).toBe(expected);
    expect(result.reason).toBeTruthy();
  });
});

describe("readiness: whether it states its generation", () => {
  it("says so for a True about the current generation, and not for a True that names none", () => {
    const conditions = { kind: "conditions" } as const;
    expect(
      evaluateReadiness(conditions, object({ observedGeneration: 2, conditions: [ready()] })).aboutGeneration,
    ).toBe(true);
    // The answer from before a spec update would read the same: the convergence waits for the update's delivery.
    expect(evaluateReadiness(conditions, object({ conditions: [ready()] }))).toEqual({
      ready: true,
      reason: "Ready=True",
    });
  });
});

describe("readiness: why a condition is not True", () => {
  const conditions = { kind: "conditions" } as const;
  const reasonOf = (condition: Record<string, unknown>) =>
    evaluateReadiness(conditions, object({ conditions: [{ type: "Available", ...condition }] })).reason;

  it.each([
    [
      "reason and message",
      { status: "False", reason: "MinimumReplicasUnavailable", message: "0 of 3 ready" },
      "Available=False (MinimumReplicasUnavailable: 0 of 3 ready)",
    ],
    ["a reason alone", { status: "Unknown", reason: "Reconciling" }, "Available=Unknown (Reconciling)"],
    [
      "a message alone, trimmed",
      { status: "False", message: "  waiting for the database  " },
      "Available=False (waiting for the database)",
    ],
    ["neither", { status: "False", reason: "", message: 7 }, "Available=False"],
  ])("quotes what the operator wrote: %s", (_name, condition, reason) => {
    expect(reasonOf(condition)).toBe(reason);
  });

  it("cuts a long message to 200 characters", () => {
    const reason = reasonOf({ status: "False", reason: "Failed", message: "x".repeat(500) });
    expect(reason).toBe(`Available=False (Failed: ${"x".repeat(191)}…)`);
  });
});

describe("readiness: CEL", () => {
  it("evaluates over the custom resource as self, whole numbers as ints", () => {
    const cel = compileCelReadiness("self.status.availableReplicas == self.spec.replicas");
    expect(evaluateReadiness(cel, object({ availableReplicas: 3 }))).toEqual({
      ready: true,
      reason: "self.status.availableReplicas == self.spec.replicas is true",
    });
    expect(evaluateReadiness(cel, object({ availableReplicas: 2 })).ready).toBe(false);
    expect(evaluateReadiness(compileCelReadiness("self.spec.replicas == 3"), object({})).ready).toBe(true);
  });

  it("is not ready, with the reason, while a field it reads does not exist yet", () => {
    const result = evaluateReadiness(
      compileCelReadiness("self.status.availableReplicas == 3"),
      object(undefined),
    );
    expect(result.ready).toBe(false);
    expect(result.reason).toMatch(/not found|no such/);
  });

  it("is not ready when the expression is not a boolean", () => {
    expect(evaluateReadiness(compileCelReadiness("self.spec.replicas"), object({})).reason).toContain(
      "not a boolean",
    );
  });

  it("reports a compile error with its position", () => {
    const error = (() => {
      try {
        compileCelReadiness("self.status.\n  ready ==");
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(CelCompileError);
    expect((error as CelCompileError).position?.line).toBe(2);
  });
});

describe("readiness: quiet", () => {
  it("has no predicate", () => {
    expect(evaluateReadiness({ kind: "quiet" }, {}).ready).toBe(true);
  });
});
