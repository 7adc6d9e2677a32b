import { describe, expect, it } from "vitest";
import type { ReferenceChild } from "../../../../src/scenario/spec-references.js";
import { driftTargets } from "../../../../src/suites/shared/drift-targets.js";
import type { WriteEntry } from "../../../../src/proxy/write-log.js";
import { foreignCopy, readyClaimBeforeRepair } from "../../../../src/suites/idempotency/preexisting-child.js";
import { writeEntry } from "../../../support/write-entry.js";

const service: ReferenceChild = {
  ref: { apiVersion: "v1", kind: "Service", name: "hello", namespace: "ref" },
  group: "",
  resource: "services",
  uid: "u-1",
  resourceVersion: "7",
  object: {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: "hello",
      namespace: "ref",
      uid: "u-1",
      resourceVersion: "7",
      labels: { app: "hello" },
      ownerReferences: [
        { apiVersion: "demo/v1", kind: "WebApp", name: "hello", uid: "owner", controller: true },
      ],
      managedFields: [
        {
          manager: "webapp-operator",
          operation: "Update",
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:spec": {
              "f:selector": { "f:app": {} },
              "f:ports": { 'k:{"port":8080,"protocol":"TCP"}': { "f:port": {}, "f:targetPort": {} } },
            },
          },
        },
      ],
    },
    spec: {
      clusterIP: "10.0.0.7",
      clusterIPs: ["10.0.0.7"],
      selector: { app: "hello" },
      ports: [{ port: 8080, targetPort: 8080, protocol: "TCP", nodePort: 30001 }],
    },
    status: { loadBalancer: {} },
  },
};

describe("foreignCopy", () => {
  it("copies the reference's child under its name, without owner, server-set fields or status, every managed field set otherwise", () => {
    const targets = driftTargets({ kind: "Service", object: service.object }, { include: [], exclude: [] });
    expect(targets.length).toBeGreaterThan(0);
    const copy = foreignCopy(service, "scenario-ns", targets);
    expect(copy).toEqual({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "hello", namespace: "scenario-ns", labels: { app: "hello" } },
      spec: {
        selector: { app: "hello-drift" },
        ports: [{ port: 8081, targetPort: 8081, protocol: "TCP" }],
      },
    });
    // The reference itself is left as it was.
    expect(service.object.metadata?.uid).toBe("u-1");
    expect((service.object as { spec: { clusterIP: string } }).spec.clusterIP).toBe("10.0.0.7");
  });

  it("moves every port of a Service with two on to a number no other of its ports has: the server refuses duplicates", () => {
    const object = {
      ...service.object,
      spec: {
        selector: { app: "hello" },
        ports: [
          { name: "admin", port: 8081, targetPort: 8081, protocol: "TCP" },
          { name: "http", port: 8080, targetPort: 8080, protocol: "TCP" },
        ],
      },
    };
    const twoPorts: ReferenceChild = { ...service, object };
    const targets = driftTargets({ kind: "Service", object }, { include: [], exclude: [] });
    const ports = (foreignCopy(twoPorts, "ns", targets) as unknown as { spec: { ports: { port: number }[] } })
      .spec.ports;
    expect(new Set(ports.map((p) => p.port)).size).toBe(2);
    expect(ports.map((p) => p.port)).not.toContain(8080);
  });

  it("makes nothing when no field of the child can be set otherwise", () => {
    expect(foreignCopy(service, "ns", [])).toBeUndefined();
  });
});

describe("readyClaimBeforeRepair", () => {
  const cr = { group: "demo", resource: "webapps" };
  const child = { group: "", resource: "services", name: "hello" };
  let seq = 0;
  const write = (fields: Partial<WriteEntry>): WriteEntry =>
    writeEntry({ seq: ++seq, group: "", resource: "services", name: "hello", ...fields });
  const ready = (status: "True" | "False") =>
    write({
      ...cr,
      subresource: "status",
      name: "web",
      body: {
        metadata: { generation: 1 },
        status: { conditions: [{ type: "Ready", status, observedGeneration: 1 }] },
      },
    });

  it("finds a Ready claim made while the child was still the kit's copy", () => {
    const claim = ready("True");
    expect(
      readyClaimBeforeRepair([ready("False"), claim, write({})], { kind: "conditions" }, cr, child),
    ).toBe(claim);
  });

  it("finds none when the operator wrote the child first, or never claimed Ready", () => {
    expect(
      readyClaimBeforeRepair([write({}), ready("True")], { kind: "conditions" }, cr, child),
    ).toBeUndefined();
    expect(
      readyClaimBeforeRepair([ready("False"), write({ effect: "no-op" })], { kind: "conditions" }, cr, child),
    ).toBeUndefined();
    // A write to another object, or a refused one, is no repair: the claim after it still counts.
    const claim = ready("True");
    expect(
      readyClaimBeforeRepair(
        [write({ name: "other" }), write({ code: 409, effect: "rejected" }), claim],
        { kind: "conditions" },
        cr,
        child,
      ),
    ).toBe(claim);
  });
});
