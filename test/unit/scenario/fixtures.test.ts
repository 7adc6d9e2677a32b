import { describe, expect, it } from "vitest";
import { fixtureChanges, type Fixture } from "../../../src/scenario/fixtures.js";
import { writeEntry } from "../../support/write-entry.js";

const secret: Fixture = {
  file: "/repo/fixtures.yaml",
  object: { apiVersion: "v1", kind: "Secret", metadata: { name: "db" } },
  group: "",
  resource: "secrets",
  namespaced: true,
};
const storageClass: Fixture = {
  file: "/repo/fixtures.yaml",
  object: { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name: "fast" } },
  group: "storage.k8s.io",
  resource: "storageclasses",
  namespaced: false,
};
const fixtures = [secret, storageClass];
/** A write of a cluster-scoped object: no namespace. */
function clusterWrite(fields: Parameters<typeof writeEntry>[0]) {
  const { namespace: _namespace, ...write } = writeEntry(fields);
  return write;
}
const toSecret = { group: "", resource: "secrets", name: "db", namespace: "ns", actor: "operator" as const };

describe("fixtureChanges", () => {
  it.each([
    {
      name: "an update of a namespaced fixture in the scenario's namespace, with the fields it changed",
      write: writeEntry({ ...toSecret, seq: 7, effect: "changed", changedPaths: ["data.password"] }),
      notes: ["the operator changed fixture Secret/db (write 7: update) (data.password)"],
    },
    {
      name: "a delete",
      write: writeEntry({ ...toSecret, seq: 8, verb: "delete", effect: "deleted" }),
      notes: ["the operator deleted fixture Secret/db (write 8: delete)"],
    },
    {
      name: "a cluster-scoped fixture's status written",
      write: clusterWrite({
        actor: "operator",
        group: "storage.k8s.io",
        resource: "storageclasses",
        name: "fast",
        subresource: "status",
        seq: 9,
        effect: "changed",
      }),
      notes: ["the operator changed fixture StorageClass/fast (write 9: update status)"],
    },
    { name: "a no-op", write: writeEntry({ ...toSecret, effect: "no-op" }), notes: [] },
    {
      name: "a rejected write",
      write: writeEntry({ ...toSecret, effect: "rejected", code: 409 }),
      notes: [],
    },
    {
      name: "the kit's own write",
      write: writeEntry({ ...toSecret, actor: "kit", effect: "changed" }),
      notes: [],
    },
    {
      name: "the same name in another namespace",
      write: writeEntry({ ...toSecret, namespace: "other", effect: "changed" }),
      notes: [],
    },
    {
      name: "another Secret",
      write: writeEntry({ ...toSecret, name: "db-2", effect: "changed" }),
      notes: [],
    },
    {
      name: "a ConfigMap of the fixture's name",
      write: writeEntry({ ...toSecret, resource: "configmaps", effect: "changed" }),
      notes: [],
    },
  ])("$name", ({ write, notes }) => {
    expect(fixtureChanges([write], fixtures, "ns")).toEqual(notes);
  });
});
