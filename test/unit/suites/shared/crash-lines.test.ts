import { describe, expect, it } from "vitest";
import type { WriteEntry } from "../../../../src/proxy/write-log.js";
import type { SpecReference } from "../../../../src/scenario/spec-references.js";
import { crashLines } from "../../../../src/suites/shared/crash-lines.js";
import { runawayCreation } from "../../../../src/suites/shared/runaway-creation.js";

let seq = 0;
function write(fields: Partial<WriteEntry>): WriteEntry {
  return {
    seq: ++seq,
    time: "t",
    verb: "create",
    group: "",
    version: "v1",
    resource: "configmaps",
    namespace: "ref",
    code: 201,
    effect: "created",
    actor: "operator",
    ...fields,
  };
}

const UID = "0f9e6c1a-3b2d-4c5e-8f7a-112233445566";

function reference(writes: WriteEntry[]): SpecReference {
  return {
    spec: 0,
    namespace: "ref",
    customResource: {},
    children: [],
    writes,
    specWrites: [{ spec: 0, seq: 0 }],
  };
}

describe("crashLines", () => {
  it("numbers the writes a crash-after ordinal counts, and leaves out ignored kinds without renumbering", () => {
    const lines = crashLines(
      reference([
        write({ resource: "deployments", group: "apps", name: "web" }),
        write({ resource: "events", name: "e1", tag: "event" }), // bookkeeping: never counted
        write({ resource: "services", name: "web", code: 409, effect: "rejected" }), // failed: not counted
        write({ resource: "services", name: "web" }),
        write({ resource: "widgets", group: "example.com", verb: "update", name: "w", effect: "no-op" }),
        write({ resource: "configmaps", name: `registration-${UID}` }),
        write({ resource: "secrets", name: "elsewhere", namespace: "other" }), // another namespace
        write({ resource: "configmaps", name: "cache", dryRun: true }),
        write({
          resource: "leases",
          group: "coordination.k8s.io",
          verb: "update",
          name: "l",
          effect: "changed",
          tag: "lease",
        }),
        write({
          resource: "widgets",
          group: "example.com",
          verb: "update",
          subresource: "status",
          name: "w",
          effect: "changed",
        }),
      ]),
      [{ group: "", resource: "services" }],
    );
    expect(lines.map((l) => l.id)).toEqual([
      "#1 create deployments.apps/web",
      // #2, the Service create, counts toward the ordinals but is a kind the contract ignores.
      "#3 create configmaps/registration-<uid>",
      "#4 update widgets.example.com/w/status",
    ]);
    expect(lines.map((l) => l.ordinal)).toEqual([1, 3, 4]);
  });

  it("names a generateName create by its prefix", () => {
    const [line] = crashLines(
      reference([write({ resource: "pods", name: "web-x7k2p", generateName: "web-" })]),
      [],
    );
    expect(line?.id).toBe("#1 create pods/web-*");
  });
});

describe("runawayCreation", () => {
  it("finds a group created at least five times, and nothing below that", () => {
    const creates = (n: number, name: (i: number) => string) =>
      Array.from({ length: n }, (_, i) =>
        write({ resource: "deployments", group: "apps", name: name(i), generateName: "hello-" }),
      );
    const byPrefix = (e: WriteEntry) => `${e.resource}/${e.generateName ?? e.name ?? ""}`;
    expect(
      runawayCreation(
        creates(5, (i) => `hello-${i}`),
        byPrefix,
      ),
    ).toEqual(["deployments/hello-", 5]);
    expect(
      runawayCreation(
        creates(4, (i) => `hello-${i}`),
        byPrefix,
      ),
    ).toBeUndefined();
    // Writes that created nothing do not count.
    const failed = creates(6, (i) => `hello-${i}`).map((e) => ({ ...e, effect: "rejected" as const }));
    expect(runawayCreation(failed, byPrefix)).toBeUndefined();
  });
});
