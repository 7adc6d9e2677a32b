import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadContract, type Contract } from "../../../../src/contract/load-contract.js";
import type { KubeObject } from "../../../../src/kube/kube-client.js";
import {
  FOREIGN_ANNOTATION,
  FOREIGN_LABEL,
  managedField,
  type ManagedFieldObservation,
  type Repair,
} from "../../../../src/suites/drift/managed-field.js";
import { writeEntry } from "../../../support/write-entry.js";

// The judge of drift/managed-field on observations built by hand: every branch of the verdict.
const root = join(import.meta.dirname, "../../../..");
let contract: Contract;
beforeAll(async () => {
  contract = await loadContract(join(root, "examples/webapp-operator/reconcile-conformance.yaml"));
});

const child = {
  ref: { apiVersion: "v1", kind: "Service", name: "hello", namespace: "ns" },
  group: "",
  resource: "services",
  uid: "uid-1",
  resourceVersion: "10",
};
const target = {
  id: "Service/hello spec.ports[0].port",
  kind: "Service",
  name: "hello",
  path: ["spec", "ports", 0, "port"],
  value: 80,
  perturbed: 81,
};

function repaired(fields: { uid?: string; annotation?: string; label?: string } = {}): Repair {
  const object: KubeObject = {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: "hello",
      uid: fields.uid ?? "uid-1",
      annotations: { [FOREIGN_ANNOTATION]: fields.annotation ?? "n0nce" },
      labels: { [FOREIGN_LABEL]: fields.label ?? "n0nce" },
    },
  };
  return { outcome: "restored", object };
}

const update = (seq: number, effect: "changed" | "no-op" = "changed") =>
  writeEntry({ seq, resource: "services", group: "", name: "hello", effect });

function observation(repair: Repair, writes = [update(7)]): ManagedFieldObservation {
  return { target, child, nonce: "n0nce", repair, writes, operatorLog: ["log line"] };
}

describe("drift/managed-field judge", () => {
  it.each<[string, ManagedFieldObservation, string, RegExp]>([
    [
      "repaired in place",
      observation(repaired()),
      "passed",
      /^repaired in place by 1 write\(s\); foreign metadata kept$/,
    ],
    [
      "repaired with no-ops around the one change",
      observation(repaired(), [update(7), update(8, "no-op"), update(9, "no-op")]),
      "passed",
      /by 1 write\(s\)/,
    ],
    [
      "recreated instead of updated",
      observation(repaired({ uid: "uid-2" })),
      "failed",
      /^repaired by recreating Service\/hello \(uid uid-1 -> uid-2\), not by an update in place$/,
    ],
    [
      "the foreign annotation erased",
      observation(repaired({ annotation: "other" })),
      "failed",
      /another writer's annotation reconcile-conformance.dev\/foreign-annotation was erased$/,
    ],
    [
      "both foreign marks erased",
      observation(repaired({ annotation: "x", label: "y" })),
      "failed",
      /annotation .* and label .* was erased/,
    ],
    [
      "a write per reconcile",
      observation(repaired(), [update(7), update(8), update(9), update(10)]),
      "failed",
      /^repaired with 4 effective writes to Service\/hello \(a repair takes at most 3\)$/,
    ],
    [
      // No evidence of a violation: the operator was still at work when the time ran out.
      "the deadline passed with the operator still writing",
      observation({ outcome: "timeout", timeoutMs: 60_000, lastReason: "spec.ports[0].port is 81" }, []),
      "inconclusive",
      /^no verdict within 60 s of the perturbation: the operator was still writing at the deadline \(last seen: spec.ports\[0\].port is 81\)$/,
    ],
    [
      "silent without restoring",
      observation({ outcome: "gave-up", value: 81 }, []),
      "failed",
      /^not repaired: spec.ports\[0\].port is still 81, and the operator has made no write for 10 s/,
    ],
  ])("%s", (_name, observed, status, message) => {
    const verdict = managedField.judge(observed, contract);
    expect(verdict.status).toBe(status);
    expect(verdict.message).toMatch(message);
  });

  it("shows the field's diff and the operator's log when not repaired", () => {
    const verdict = managedField.judge(observation({ outcome: "gave-up", value: 81 }, []), contract);
    expect(verdict.evidence?.diffs).toEqual([
      { object: "Service/hello", path: "spec.ports[0].port", expected: 80, actual: 81 },
    ]);
    expect(verdict.evidence?.operatorLog).toEqual(["log line"]);
  });

  it("lets a child whose contract withdraws uid be recreated, and says so", () => {
    const withdrawn: Contract = {
      ...contract,
      promises: [
        {
          rule: "promises[0]",
          kind: "Service",
          keeps: ["resourceVersion", "generation"],
          reason: "recreated by design",
          volatile: [],
        },
      ],
    };
    const verdict = managedField.judge(observation(repaired({ uid: "uid-2" })), withdrawn);
    expect(verdict.status).toBe("passed");
    expect(verdict.message).toMatch(/^repaired by recreating it, as the contract allows,/);
    expect(verdict.evidence?.notes?.[0]).toMatch(
      /^not counted: repaired by recreating .*does not promise uid \(promises\[0\]: recreated by design\)/,
    );
  });
});
