import type { Contract } from "../../../../src/contract/load-contract.js";
import { loadContract } from "../../../../src/contract/load-contract.js";
import type { HeldEvent } from "../../../../src/proxy/watch-gate.js";
import type { WatchFaultProof } from "../../../../src/proxy/watch-faults.js";
import type { LiveChild } from "../../../../src/scenario/reference-state.js";
import { writeEntry } from "../../../support/write-entry.js";

/**
 * Hand-built pieces of the staleness suite's observations: Services as
 * live or reference children, watch fault proofs, and the example's
 * contract with or without a promise that withdraws `uid` from Services.
 */

export const EXAMPLE_CONTRACT = "examples/webapp-operator/reconcile-conformance.yaml";

/** The example's contract; `uidWithdrawn`: with a promise that lets every Service be recreated. */
export async function exampleContract(options: { uidWithdrawn?: boolean } = {}): Promise<Contract> {
  const contract = await loadContract(EXAMPLE_CONTRACT);
  if (!options.uidWithdrawn) return contract;
  return {
    ...contract,
    promises: [
      {
        rule: "promises[0]",
        kind: "Service",
        keeps: ["resourceVersion", "generation"],
        reason: "recreated on every rotation",
        volatile: [],
      },
    ],
  };
}

/** Service `name` in namespace ns, with its uid and its one port: a child whose managed field is the port. */
export function service(name: string, uid: string, port = 80): LiveChild {
  const ref = { apiVersion: "v1", kind: "Service", name, namespace: "ns" };
  return {
    ref,
    group: "",
    resource: "services",
    uid,
    resourceVersion: "10",
    object: {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name,
        namespace: "ns",
        uid,
        resourceVersion: "10",
        managedFields: [
          {
            manager: "operator",
            operation: "Update",
            fieldsType: "FieldsV1",
            fieldsV1: {
              "f:spec": {
                "f:ports": {
                  [`k:{"port":${port},"protocol":"TCP"}`]: {
                    "f:port": {},
                    "f:targetPort": {},
                    "f:protocol": {},
                  },
                },
              },
            },
          },
        ],
      },
      spec: { ports: [{ port, targetPort: port, protocol: "TCP" }] },
    },
  };
}

/** The operator's create of Service `name` (uid `uid`) at write `seq`. */
export function serviceCreate(seq: number, name: string, uid: string) {
  return writeEntry({
    seq,
    verb: "create",
    group: "",
    resource: "services",
    name,
    uid,
    code: 201,
    effect: "created",
  });
}

/** The operator's delete of Service `name` (uid `uid`) at write `seq`, which took effect. */
export function serviceDelete(seq: number, name: string, uid: string) {
  return writeEntry({
    seq,
    verb: "delete",
    group: "",
    resource: "services",
    name,
    uid,
    code: 200,
    effect: "deleted",
  });
}

/** `n` watch events of object `name`, resourceVersions from 100 on. */
export function events(n: number, name = "web"): HeldEvent[] {
  return Array.from({ length: n }, (_, i) => ({
    type: i === 0 ? "ADDED" : "MODIFIED",
    name,
    resourceVersion: String(100 + i),
  }));
}

/** A watch fault's proof: what it took and delivered on one stream. */
export function watchProof(taken: number, delivered: number): WatchFaultProof {
  return { id: "w1", streams: 1, taken: events(taken), delivered: events(delivered), bookmarksWithheld: 0 };
}
