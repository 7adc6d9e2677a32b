import { describe, expect, it } from "vitest";
import { compileCelReadiness, type Readiness } from "../../../../src/contract/readiness.js";
import type { WriteEntry } from "../../../../src/proxy/write-log.js";
import type { SpecReference } from "../../../../src/scenario/spec-references.js";
import { childUpdateTargets } from "../../../../src/suites/conflict/child-update.js";
import {
  earlyReadyClaims,
  isStatusWrite,
  requiredChildWrites,
  statusClaim,
} from "../../../../src/suites/shared/status-claims.js";
import { mergePatchMismatches } from "../../../../src/suites/conflict/status-update.js";
import { writeEntry } from "../../../support/write-entry.js";

const CR = { group: "demo.example.dev", resource: "webapps" };
const conditions: Readiness = { kind: "conditions" };

let seq = 0;
function write(fields: Partial<WriteEntry>): WriteEntry {
  return writeEntry({ seq: ++seq, ...fields });
}

function statusBody(ready: "True" | "False", observedGeneration?: number): unknown {
  return {
    metadata: { name: "web", generation: 99 },
    status: {
      conditions: [
        { type: "Ready", status: ready, ...(observedGeneration === undefined ? {} : { observedGeneration }) },
      ],
    },
  };
}

function status(ready: "True" | "False", observedGeneration?: number): Partial<WriteEntry> {
  return { ...CR, version: "v1alpha1", subresource: "status", body: statusBody(ready, observedGeneration) };
}

describe("statusClaim", () => {
  it("reads the generation a status names and judges Ready as if it were the object's generation", () => {
    expect(statusClaim(conditions, statusBody("True", 3))).toEqual({
      ready: true,
      generation: 3,
      named: true,
    });
    expect(statusClaim(conditions, statusBody("False", 3))).toEqual({
      ready: false,
      generation: 3,
      named: true,
    });
    expect(statusClaim(conditions, { status: { observedGeneration: 2, conditions: [] } })).toEqual({
      ready: false,
      generation: 2,
      named: true,
    });
  });

  it("takes the generation of the object a whole-object status write sent when the status names none", () => {
    // UpdateStatus of an object as the writer read it: its conclusions are about that generation.
    expect(statusClaim(conditions, statusBody("True"))).toEqual({
      ready: true,
      generation: 99,
      named: false,
    });
    const cel = compileCelReadiness("self.status.available == self.spec.replicas");
    expect(
      statusClaim(cel, { metadata: { generation: 2 }, spec: { replicas: 2 }, status: { available: 2 } }),
    ).toEqual({ ready: true, generation: 2, named: false });
    // A status patch that names nothing is about no known generation.
    expect(statusClaim(conditions, { status: { conditions: [{ type: "Ready", status: "True" }] } })).toEqual({
      ready: true,
      named: false,
    });
  });

  it("evaluates a CEL predicate on the body, and a body it cannot read claims nothing", () => {
    const cel = compileCelReadiness("self.status.available == self.spec.replicas");
    expect(statusClaim(cel, { spec: { replicas: 2 }, status: { available: 2 } }).ready).toBe(true);
    expect(statusClaim(cel, { status: { available: 2 } }).ready).toBe(false); // a patch without spec
  });

  it("never claims anything for quiet readiness or a missing body", () => {
    expect(statusClaim({ kind: "quiet" }, statusBody("True", 1)).ready).toBe(false);
    expect(statusClaim(conditions, undefined)).toEqual({ ready: false, named: false });
  });
});

describe("isStatusWrite", () => {
  it("is a write of the custom resource's status subresource, or a main-resource write carrying a status", () => {
    expect(isStatusWrite(write(status("True", 1)), CR)).toBe(true);
    expect(isStatusWrite(write({ ...CR, body: { status: {} } }), CR)).toBe(true);
    expect(isStatusWrite(write({ ...CR, body: { spec: {} } }), CR)).toBe(false);
    expect(isStatusWrite(write({ body: { status: {} } }), CR)).toBe(false); // a Deployment
  });
});

/** Spec 0 creates both children; spec 1 updates the Deployment; spec 2 the Deployment and the Service. */
function reference(): SpecReference {
  seq = 0;
  const writes = [
    write({ verb: "create", effect: "created", code: 201 }), // 2
    write({ verb: "create", effect: "created", code: 201, group: "", resource: "services" }), // 3
    write(status("True", 1)), // 4
    write({}), // 6: spec 1
    write({ verb: "patch", effect: "no-op" }), // 7: changes nothing, needs nothing
    write(status("True", 2)), // 8
    write({}), // 10: spec 2
    write({ group: "", resource: "services" }), // 11
    write(status("True", 3)), // 12
  ];
  const at = [1, 5, 9];
  writes.forEach((w, i) => Object.assign(w, { seq: [2, 3, 4, 6, 7, 8, 10, 11, 12][i] }));
  return {
    spec: 2,
    namespace: "ns",
    customResource: {},
    children: [],
    writes,
    specWrites: at.map((s, spec) => ({ spec, seq: s, generation: spec + 1 })),
  };
}

describe("requiredChildWrites", () => {
  it("lists each child the reference wrote (create or effective update) between a spec's write and the next", () => {
    const ref = reference();
    expect([...requiredChildWrites(ref, 0, CR).keys()]).toEqual(["deployments.apps/web", "services/web"]);
    expect([...requiredChildWrites(ref, 1, CR).keys()]).toEqual(["deployments.apps/web"]);
    expect([...requiredChildWrites(ref, 2, CR).keys()]).toEqual(["deployments.apps/web", "services/web"]);
  });

  it("leaves out what the operator wrote in another namespace: its manager's records, another life's objects", () => {
    const ref = reference();
    const elsewhere = {
      ...write({
        verb: "create",
        effect: "created",
        code: 201,
        group: "",
        resource: "configmaps",
        name: "op-leader",
        namespace: "default",
      }),
      seq: 13,
    };
    const withElsewhere = { ...ref, writes: [...ref.writes, elsewhere].sort((a, b) => a.seq - b.seq) };
    expect([...requiredChildWrites(withElsewhere, 2, CR).keys()]).toEqual([
      "deployments.apps/web",
      "services/web",
    ]);
  });

  it("leaves out what the operator's clock made: a tick's Job is no child the spec needs", () => {
    const ref = reference();
    const tick = {
      ...write({
        verb: "create",
        effect: "created",
        code: 201,
        group: "batch",
        resource: "jobs",
        name: "web-1796610660",
      }),
      seq: 13,
      clock: {
        quietSinceSeq: 12,
        quietSince: "2026-12-07T12:00:58.100Z",
        afterMs: 1_904,
        by: "queues" as const,
        pending: "its last reconcile asked for a delayed requeue (RequeueAfter)",
      },
    };
    const withTick = { ...ref, writes: [...ref.writes, tick] };
    expect([...requiredChildWrites(withTick, 2, CR).keys()]).toEqual([
      "deployments.apps/web",
      "services/web",
    ]);
    const { clock: _clock, ...answer } = tick;
    expect([...requiredChildWrites({ ...ref, writes: [...ref.writes, answer] }, 2, CR).keys()]).toContain(
      "jobs.batch/web-1796610660",
    );
  });

  it("is a range error for a spec the reference never set", () => {
    expect(() => requiredChildWrites(reference(), 3, CR)).toThrow(RangeError);
  });
});

describe("earlyReadyClaims", () => {
  const required = (spec: number) => requiredChildWrites(reference(), spec, CR);

  it("finds nothing when every Ready claim follows the child writes of its generation's spec", () => {
    const ref = reference();
    const result = earlyReadyClaims({
      writes: ref.writes,
      specWrites: ref.specWrites,
      required,
      readiness: conditions,
      cr: CR,
    });
    expect(result).toEqual({ early: [], claims: 3, unjudged: 0 });
  });

  it("flags a Ready claim for a generation made before that spec's child writes (early-ready)", () => {
    seq = 100;
    const specWrites = [
      { spec: 0, seq: 101, generation: 1 },
      { spec: 2, seq: 110, generation: 3 },
    ];
    seq = 101;
    const writes = [
      write({ verb: "create", effect: "created", code: 201 }), // 102
      write({ verb: "create", effect: "created", code: 201, group: "", resource: "services" }), // 103
      write(status("True", 1)), // 104
    ];
    seq = 110;
    writes.push(
      write(status("True", 3)), // 111: before any write for spec 2
      write({}), // 112
      write({ group: "", resource: "services" }), // 113
    );
    const result = earlyReadyClaims({ writes, specWrites, required, readiness: conditions, cr: CR });
    expect(result.early).toHaveLength(1);
    expect(result.early[0]).toMatchObject({
      generation: 3,
      spec: 2,
      missing: ["deployments.apps/web", "services/web"],
    });
    expect(result.early[0]?.claim.seq).toBe(111);
  });

  it("does not judge claims that name no generation or one no spec write produced; ignores refused and not-Ready writes", () => {
    seq = 200;
    const writes = [
      write({ ...status("True"), body: { status: { conditions: [{ type: "Ready", status: "True" }] } } }), // no generation
      write(status("True", 7)), // no spec write made generation 7
      write({ ...status("True", 1), code: 409, effect: "rejected" }),
      write(status("False", 1)),
    ];
    const result = earlyReadyClaims({
      writes,
      specWrites: [{ spec: 0, seq: 199, generation: 1 }],
      required,
      readiness: conditions,
      cr: CR,
    });
    expect(result).toEqual({ early: [], claims: 2, unjudged: 2 });
  });
});

describe("earlyReadyClaims with children the reference lives could not pair", () => {
  it("does not judge a claim whose missing child is of a resource with unpaired names", () => {
    seq = 300;
    const specWrites = [{ spec: 0, seq: 300, generation: 1 }];
    // The reference wrote Secret s-1a2b; this life wrote s-9f8e: the lives could not pair them.
    const referenceWrites = [
      write({ verb: "create", effect: "created", code: 201, group: "", resource: "secrets", name: "s-1a2b" }),
    ];
    const writes = [
      write({ verb: "create", effect: "created", code: 201, group: "", resource: "secrets", name: "s-9f8e" }),
      write(status("True", 1)),
    ];
    const roles = {
      roles: [],
      unpaired: [{ kind: "Secret", group: "", resource: "secrets", names: ["s-1a2b", "s-9f8e"], why: "…" }],
    };
    const required = () =>
      requiredChildWrites({ namespace: "ns", writes: referenceWrites, specWrites, roles }, 0, CR);
    const input = { writes, specWrites, required, readiness: conditions, cr: CR };
    expect(earlyReadyClaims({ ...input, roles })).toEqual({ early: [], claims: 1, unjudged: 1 });
    // Without the roles the names are compared as they are: the claim reads as early.
    expect(earlyReadyClaims(input).early).toHaveLength(1);
  });
});

describe("childUpdateTargets", () => {
  it("takes the first effective update or patch per child kind after update 1, never a create or the custom resource", () => {
    seq = 0;
    const ref: SpecReference = {
      spec: 1,
      namespace: "ns",
      customResource: {},
      children: [],
      specWrites: [
        { spec: 0, seq: 0 },
        { spec: 1, seq: 5 },
      ],
      writes: [
        write({ seq: 3 }), // before update 1
        write({ seq: 6, verb: "patch", effect: "no-op" }),
        write({ seq: 7, group: "", resource: "configmaps", verb: "create", effect: "created" }),
        write({ seq: 8, ...status("False", 2) }),
        write({ seq: 9 }),
        write({ seq: 10, name: "other" }),
        write({ seq: 11, group: "", resource: "configmaps", verb: "patch" }),
      ],
    };
    expect(childUpdateTargets(ref, CR).map((w) => w.seq)).toEqual([9, 11]);
  });
});

describe("mergePatchMismatches", () => {
  it("lists the paths where a merge patch no longer holds (null: the key must be absent)", () => {
    const object = { spec: { port: 9090, args: ["a"], replicas: 2 }, metadata: { labels: { x: "1" } } };
    expect(mergePatchMismatches(object, { spec: { port: 9090, args: ["a"] } })).toEqual([]);
    expect(mergePatchMismatches(object, { spec: { port: 80, args: ["b"] } })).toEqual([
      "spec.port",
      "spec.args",
    ]);
    expect(mergePatchMismatches(object, { metadata: { labels: { x: null, y: null } } })).toEqual([
      "metadata.labels.x",
    ]);
    expect(mergePatchMismatches({}, { spec: { port: 1 } })).toEqual(["spec.port"]);
  });
});
