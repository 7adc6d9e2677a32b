import { describe, expect, it } from "vitest";
import type { WriteEntry } from "../../../../src/proxy/write-log.js";
import type { SpecReference } from "../../../../src/scenario/spec-references.js";
import { learnRoles } from "../../../../src/scenario/child-roles.js";
import { Inconclusive } from "../../../../src/scenario/scenario.js";
import {
  assertFindable,
  crashLines,
  missedCrash,
  writeMeaning,
  type CrashLine,
} from "../../../../src/suites/shared/crash-lines.js";
import { runawayCreation } from "../../../../src/suites/shared/runaway-writes.js";

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

/** The operator's status write of widget w, claiming `conditions` (type -> status). */
const status = (conditions: Record<string, string>, fields: Partial<WriteEntry> = {}) =>
  write({
    resource: "widgets",
    group: "example.com",
    verb: "update",
    subresource: "status",
    name: "w",
    effect: "changed",
    body: { status: { conditions: Object.entries(conditions).map(([type, s]) => ({ type, status: s })) } },
    ...fields,
  });

const NO_CLOCK = { ignoreWrites: [], clock: {} };

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
        status({}),
      ]),
      { ignoreWrites: [{ group: "", resource: "services" }], clock: {} },
    );
    expect(lines.map((l) => l.id)).toEqual([
      "create deployments.apps/web",
      // #2, the Service create, counts toward the ordinals but is a kind the contract ignores.
      "create configmaps/registration-<uid>",
      "update widgets.example.com/w/status",
    ]);
    expect(lines.map((l) => l.ordinal)).toEqual([1, 3, 4]);
  });

  it("names a generateName create by its prefix", () => {
    const [line] = crashLines(
      reference([write({ resource: "pods", name: "web-x7k2p", generateName: "web-" })]),
      NO_CLOCK,
    );
    expect(line?.id).toBe("create pods/web-*");
  });
});

describe("crash lines by meaning", () => {
  it("knows a status write by what it claims, and a create by its effect", () => {
    expect(writeMeaning(status({ Ready: "False", Degraded: "True" }), undefined)).toBe(
      "update widgets.example.com/w/status Degraded=True,Ready=False",
    );
    expect(
      writeMeaning(write({ verb: "patch", patchType: "apply", name: "c", effect: "created" }), undefined),
    ).toBe("create configmaps/c");
  });

  it("counts each meaning's occurrences, and marks those a second life wrote fewer times as timing", () => {
    const first = [
      write({ name: "c" }),
      status({ Ready: "False" }),
      status({ Degraded: "True" }), // a transient condition while the cache catches up
      status({ Ready: "False" }),
      status({ Ready: "True" }),
    ];
    const second = [
      write({ name: "c", namespace: "second" }),
      status({ Ready: "False" }, { namespace: "second" }),
      status({ Ready: "True" }, { namespace: "second" }),
    ];
    const lines = crashLines(
      { ...reference(first), secondLife: { namespace: "second", writes: second } },
      NO_CLOCK,
    );
    expect(lines.map((l) => [l.id, l.occurrence, l.timing !== undefined])).toEqual([
      ["create configmaps/c", 1, false],
      ["update widgets.example.com/w/status Ready=False", 1, false],
      ["update widgets.example.com/w/status Degraded=True", 1, true],
      ["update widgets.example.com/w/status Ready=False (2nd)", 2, true],
      ["update widgets.example.com/w/status Ready=True", 1, false],
    ]);
    expect(lines[2]?.timing).toContain('wrote "update widgets.example.com/w/status Degraded=True" never');
  });

  it("marks a write to a child whose names the lives could not pair as unfindable, not as timing", () => {
    const configMap = (name: string, namespace: string) => ({
      kind: "ConfigMap",
      group: "",
      resource: "configmaps",
      name,
      object: { metadata: { name, namespace } },
    });
    // Two varying names in one life and one in the other: configmaps cannot be paired.
    const roles = learnRoles(
      { namespace: "ref", children: [configMap("a-1111", "ref"), configMap("b-2222", "ref")] },
      { namespace: "second", children: [configMap("a-3333", "second")] },
    );
    const lines = crashLines(
      {
        ...reference([write({ name: "a-1111" }), write({ resource: "services", name: "web" })]),
        roles,
        secondLife: {
          namespace: "second",
          writes: [
            write({ name: "a-3333", namespace: "second" }),
            write({ resource: "services", name: "web", namespace: "second" }),
          ],
        },
      },
      NO_CLOCK,
    );
    expect(lines[0]?.timing).toBeUndefined();
    expect(lines[0]?.unpaired).toMatch(
      /^the write is to configmaps\/a-1111, whose name the two reference lives could not pair \(2 ConfigMap\(s\) named differently in one reference life and 1 in the other; /,
    );
    expect(lines[1]).not.toHaveProperty("unpaired");
    // A fixed name of that kind both lives had is found in every life.
    const fixed = learnRoles(
      {
        namespace: "ref",
        children: [configMap("cfg", "ref"), configMap("a-1111", "ref"), configMap("b-2222", "ref")],
      },
      { namespace: "second", children: [configMap("cfg", "second"), configMap("a-3333", "second")] },
    );
    expect(
      crashLines({ ...reference([write({ name: "cfg" })]), roles: fixed }, NO_CLOCK)[0],
    ).not.toHaveProperty("unpaired");
    expect(() => assertFindable(lines[0] as CrashLine)).toThrow(Inconclusive);
  });

  it("skips a status write or a repeat this life never made (timing), and stays inconclusive on any other", () => {
    const lines = crashLines(
      reference([
        write({ name: "c" }),
        write({ verb: "update", name: "c", effect: "changed" }),
        status({ Ready: "True" }),
      ]),
      NO_CLOCK,
    );
    const notReached = { status: "not-reached" as const, writes: [] };
    expect(lines.map((l) => missedCrash(l, notReached)?.status)).toEqual([
      "inconclusive",
      "inconclusive",
      "skipped",
    ]);
    const again = crashLines(reference([write({ name: "c" }), write({ name: "c" })]), NO_CLOCK);
    expect(missedCrash(again[1]!, notReached)?.status).toBe("skipped");
  });

  it("names a child by its role, so a name derived from the owner's identity means the same in every life", () => {
    const roles = learnRoles(
      {
        namespace: "a",
        children: [{ kind: "Secret", group: "", resource: "secrets", name: "auth-1a2b3c4d", object: {} }],
      },
      {
        namespace: "b",
        children: [{ kind: "Secret", group: "", resource: "secrets", name: "auth-9f8e7d6c", object: {} }],
      },
    );
    expect(writeMeaning(write({ resource: "secrets", name: "auth-00ff00ff" }), roles)).toBe(
      "create secrets/auth-*",
    );
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
