import type { WriteEntry } from "../../src/proxy/write-log.js";

/** A write-log entry for pure tests: a successful operator update of Deployment ns/web unless told otherwise. */
export function writeEntry(fields: Partial<WriteEntry> = {}): WriteEntry {
  return {
    seq: 1,
    time: "t",
    verb: "update",
    group: "apps",
    version: "v1",
    resource: "deployments",
    namespace: "ns",
    name: "web",
    code: 200,
    effect: "changed",
    actor: "operator",
    ...fields,
  };
}
