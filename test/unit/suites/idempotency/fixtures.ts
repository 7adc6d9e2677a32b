import type { Contract } from "../../../../src/contract/load-contract.js";
import type { KillRecord } from "../../../../src/proxy/faults.js";
import type { WriteEntry } from "../../../../src/proxy/write-log.js";
import type { LiveChild } from "../../../../src/scenario/reference-state.js";
import type { SpecReference } from "../../../../src/scenario/spec-references.js";
import { writeEntry } from "../../../support/write-entry.js";

/** The webapp example's contract: the judges read its readiness, drift, promises and custom resource. */
export const CONTRACT_FILE = "examples/webapp-operator/reconcile-conformance.yaml";

/** A write-log entry: an operator write to Service hello unless told otherwise. */
export function write(fields: Partial<WriteEntry> = {}): WriteEntry {
  return writeEntry({ group: "", resource: "services", name: "hello", ...fields });
}

/** The operator's create of Service hello (uid `uid`) as write `seq`. */
export function serviceCreate(seq: number, uid = "u-1"): WriteEntry {
  return write({ seq, verb: "create", code: 201, effect: "created", uid });
}

/**
 * Service hello as the operator made it: selector app=hello, one port 8080,
 * both fields it manages (so the end-state comparison has targets);
 * `owner` is its owner's UID (none when undefined).
 */
export function service(
  fields: { uid?: string; owner?: string | undefined; app?: string; name?: string; namespace?: string } = {},
): LiveChild {
  const { uid = "u-1", app = "hello", name = "hello", namespace = "ns" } = fields;
  const owner = "owner" in fields ? fields.owner : "cr-uid";
  return {
    ref: { apiVersion: "v1", kind: "Service", name, ...(namespace ? { namespace } : {}) },
    group: "",
    resource: "services",
    uid,
    resourceVersion: "7",
    object: {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name,
        ...(namespace ? { namespace } : {}),
        uid,
        resourceVersion: "7",
        ...(owner
          ? {
              ownerReferences: [
                { apiVersion: "demo/v1", kind: "WebApp", name: "hello", uid: owner, controller: true },
              ],
            }
          : {}),
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
        selector: { app },
        ports: [{ port: 8080, targetPort: 8080, protocol: "TCP" }],
      },
    },
  };
}

/** A kill as the fault records it. */
export const KILL: KillRecord = { signal: "SIGKILL", pids: [41, 42], run: 1 };

/** What the crash checks' targets are chosen from: a contract and a reference of `writes`. */
export function crashLineContext(contract: Contract, writes: SpecReference["writes"]) {
  const reference: SpecReference = {
    spec: 0,
    namespace: "ref",
    customResource: {},
    children: [service()],
    writes,
    specWrites: [{ spec: 0, seq: 0 }],
  };
  return { contract, references: new Map([[0, reference]]) };
}
