import { describe, expect, it } from "vitest";
import type { ReferenceChild } from "../../src/runner/spec-references.js";
import { driftTargets } from "../../src/suites/drift-targets.js";
import { foreignCopy } from "../../src/suites/preexisting-child.js";

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

  it("makes nothing when no field of the child can be set otherwise", () => {
    expect(foreignCopy(service, "ns", [])).toBeUndefined();
  });
});
