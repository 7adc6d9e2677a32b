import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FaultPlan, normalisedName, sameWrite, type FaultCandidate } from "../../../src/proxy/faults.js";
import { classifyRequest } from "../../../src/proxy/request-classifier.js";
import { tagOf, WriteLog, type WriteEntry } from "../../../src/proxy/write-log.js";

function entry(log: WriteLog, fields: Partial<WriteEntry>): WriteEntry {
  return {
    seq: log.takeSeq(),
    time: "t",
    verb: "create",
    group: "",
    version: "v1",
    resource: "configmaps",
    code: 201,
    effect: "created",
    actor: "operator",
    ...fields,
  };
}

describe("WriteLog", () => {
  it("keeps entries in arrival order even when they complete out of order, and mirrors them to NDJSON", async () => {
    const file = join(await mkdtemp(join(tmpdir(), "rc-log-")), "writes.ndjson");
    const log = new WriteLog(file);
    const first = entry(log, { name: "a" });
    const second = entry(log, { name: "b", resource: "leases", group: "coordination.k8s.io", tag: "lease" });
    log.append(second);
    log.append(first);
    expect(log.query().map((e) => e.name)).toEqual(["a", "b"]);
    expect(log.query({ withoutTags: true }).map((e) => e.name)).toEqual(["a"]);
    expect(log.query({ after: first.seq }).map((e) => e.name)).toEqual(["b"]);
    expect(log.lastSeq).toBe(second.seq);
    await log.flush();
    const lines = (await readFile(file, "utf8"))
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as WriteEntry).name);
    expect(lines).toEqual(["b", "a"]); // the file is a journal: in completion order, each with its seq
  });

  it("waits for a matching write and times out with what it looked for", async () => {
    const log = new WriteLog();
    const waiting = log.waitFor({ resource: "services" }, { timeoutMs: 5_000 });
    log.append(entry(log, { resource: "services", name: "web" }));
    await expect(waiting).resolves.toMatchObject({ name: "web" });
    await expect(log.waitFor({ resource: "secrets" }, { timeoutMs: 30 })).rejects.toThrow(
      'no write matching {"resource":"secrets"}',
    );
  });

  it("tags a ConfigMap or Endpoints that carries a leader record as a lease: the manager's, not a child", () => {
    const leader = { metadata: { annotations: { "control-plane.alpha.kubernetes.io/leader": "{}" } } };
    expect(tagOf(classifyRequest("PUT", "/api/v1/namespaces/default/configmaps/op-leader"), leader)).toBe(
      "lease",
    );
    expect(tagOf(classifyRequest("PUT", "/api/v1/namespaces/default/endpoints/op-leader"), leader)).toBe(
      "lease",
    );
    expect(
      tagOf(classifyRequest("PUT", "/api/v1/namespaces/ns/configmaps/web"), { data: {} }),
    ).toBeUndefined();
    expect(tagOf(classifyRequest("PUT", "/api/v1/namespaces/ns/secrets/s"), leader)).toBeUndefined();
  });

  it("tags Events, Leases and requests that store nothing", () => {
    expect(tagOf(classifyRequest("POST", "/api/v1/namespaces/ns/events"))).toBe("event");
    expect(tagOf(classifyRequest("POST", "/apis/events.k8s.io/v1/namespaces/ns/events"))).toBe("event");
    expect(tagOf(classifyRequest("PUT", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l"))).toBe(
      "lease",
    );
    expect(tagOf(classifyRequest("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews"))).toBe(
      "review",
    );
    expect(tagOf(classifyRequest("POST", "/api/v1/namespaces/ns/serviceaccounts/sa/token"))).toBe("review");
    expect(tagOf(classifyRequest("PUT", "/api/v1/namespaces/ns/configmaps/c"))).toBeUndefined();
  });
});

/** An operator write about to be sent, as the proxy offers it to the faults. */
function candidate(fields: Partial<FaultCandidate> = {}): FaultCandidate {
  return {
    verb: "create",
    group: "",
    resource: "configmaps",
    namespace: "ns",
    actor: "operator",
    hasPrecondition: false,
    countable: true,
    ...fields,
  };
}

describe("FaultPlan", () => {
  it("acts once, on the nth matching write, and reports reached with its evidence", () => {
    const log = new WriteLog();
    const plan = new FaultPlan(log);
    const armed = plan.arm({ kind: "fail-with", status: 500, match: { resource: "services", nth: 2 } });
    expect(plan.takeBefore(candidate({ resource: "configmaps" }))).toBeUndefined();
    expect(plan.takeBefore(candidate({ resource: "services" }))).toBeUndefined();
    const taken = plan.takeBefore(candidate({ resource: "services" }));
    expect(taken?.id).toBe(armed.id);
    expect(plan.takeBefore(candidate({ resource: "services" }))).toBeUndefined(); // spent
    expect(armed.outcome()).toEqual({ status: "not-reached" });
    const hit = entry(log, { resource: "services", code: 500, effect: "rejected" });
    taken?.fire({ hit });
    expect(armed.outcome()).toEqual({ status: "reached", evidence: { hit } });
  });

  it("never acts on the kit's own writes", () => {
    const plan = new FaultPlan(new WriteLog());
    plan.arm({ kind: "mutate-before", mutation: { kind: "annotate" }, match: {} });
    expect(plan.takeBefore(candidate({ actor: "kit" }))).toBeUndefined();
    expect(plan.takeBefore(candidate())).toBeDefined();
  });

  it("conflict-before skips writes without a precondition, without counting them", () => {
    const plan = new FaultPlan(new WriteLog());
    plan.arm({ kind: "conflict-before", match: { verb: "update" } });
    expect(plan.takeBefore(candidate({ verb: "update", hasPrecondition: false }))).toBeUndefined();
    expect(plan.takeBefore(candidate({ verb: "update", hasPrecondition: true }))).toBeDefined();
  });

  it("mutate-before with a body predicate acts only on a write whose body satisfies it", () => {
    const plan = new FaultPlan(new WriteLog());
    const armed = plan.arm({
      kind: "mutate-before",
      mutation: { kind: "annotate" },
      match: { verb: "update", subresource: "status" },
      when: (body) => (body as { status?: { ready?: boolean } } | undefined)?.status?.ready === true,
    });
    const status = { verb: "update" as const, subresource: "status", hasPrecondition: true };
    expect(plan.takeBefore(candidate({ ...status, body: { status: { ready: false } } }))).toBeUndefined();
    expect(plan.takeBefore(candidate({ ...status }))).toBeUndefined(); // protobuf: no parsed body
    expect(plan.takeBefore(candidate({ ...status, body: { status: { ready: true } } }))?.id).toBe(armed.id);
  });

  it("ordinal: a fault acting before a write never takes an Event, a Lease, a review or a dry run", () => {
    const plan = new FaultPlan(new WriteLog());
    const armed = plan.arm({ kind: "fail-with", status: 500, match: { namespace: "ns", ordinal: 1 } });
    expect(plan.takeBefore(candidate({ resource: "events", countable: false }))).toBeUndefined();
    expect(plan.takeBefore(candidate({ verb: "create", countable: false }))).toBeUndefined();
    expect(plan.takeBefore(candidate({ resource: "configmaps" }))?.id).toBe(armed.id);
  });

  it("ordinal: counts successful operator writes in scope, leaving out bookkeeping, failures, kit writes and (if asked) no-ops", () => {
    const log = new WriteLog();
    const plan = new FaultPlan(log);
    const before = plan.arm({
      kind: "mutate-before",
      mutation: { kind: "annotate" },
      match: { namespace: "ns", ordinal: 3, excludeNoOps: true },
    });
    const after = plan.arm({
      kind: "crash-after",
      match: { namespace: "ns", ordinal: 3, excludeNoOps: true },
    });
    const append = (fields: Partial<WriteEntry>) => {
      const e = entry(log, { namespace: "ns", ...fields });
      log.append(e);
      return e;
    };
    append({}); // 1
    append({ resource: "leases", group: "coordination.k8s.io", tag: "lease" });
    append({ code: 409, effect: "rejected" });
    append({ actor: "kit" });
    append({ dryRun: true, effect: "no-op" });
    append({ namespace: "other" });
    append({ verb: "update", code: 200, effect: "no-op" });
    // The third counted write is not there yet: the write about to be sent is it.
    append({ verb: "update", code: 200, effect: "changed" }); // 2
    expect(
      plan.takeAfter(entry(log, { namespace: "ns", verb: "update", code: 200, effect: "no-op" })),
    ).toBeUndefined();
    const taken = plan.takeBefore(candidate({ verb: "patch" }));
    expect(taken?.id).toBe(before.id);
    const third = entry(log, { namespace: "ns", verb: "patch", code: 200, effect: "changed" });
    expect(plan.takeAfter(third)?.id).toBe(after.id);
  });

  it("judges diverged when the write hit is not the baseline's, with names from UIDs and generateName normalised", () => {
    const log = new WriteLog();
    const plan = new FaultPlan(log);
    const expected = {
      verb: "create" as const,
      group: "",
      resource: "configmaps",
      name: "registration-11111111-2222-3333-4444-555555555555",
    };
    const same = plan.arm({ kind: "crash-after", match: { ordinal: 1 }, expect: expected });
    const hit = entry(log, { name: "registration-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee" });
    plan.takeAfter(hit)?.fire({ hit });
    expect(same.outcome().status).toBe("reached");

    const other = plan.arm({
      kind: "crash-after",
      match: { ordinal: 1 },
      expect: { ...expected, resource: "services" },
    });
    plan.takeAfter(hit)?.fire({ hit });
    expect(other.outcome()).toMatchObject({
      status: "diverged",
      expected: { resource: "services" },
      evidence: { hit },
    });
  });

  it("crash-after with `select` takes the nth counted write it accepts, whatever its position", () => {
    const log = new WriteLog();
    const plan = new FaultPlan(log);
    const armed = plan.arm({
      kind: "crash-after",
      match: { namespace: "ns", nth: 2, excludeNoOps: true },
      select: (e) => e.subresource === "status",
    });
    const write = (fields: Partial<WriteEntry>) =>
      entry(log, { namespace: "ns", verb: "update", code: 200, effect: "changed", ...fields });
    expect(plan.takeAfter(write({ subresource: "status" }))).toBeUndefined(); // the first status write
    expect(plan.takeAfter(write({}))).toBeUndefined(); // not a status write: not a candidate
    expect(plan.takeAfter(write({ subresource: "status", effect: "no-op" }))).toBeUndefined(); // a no-op does not count
    expect(plan.takeAfter(write({ subresource: "status", namespace: "other" }))).toBeUndefined(); // out of scope
    const second = write({ subresource: "status" });
    const taken = plan.takeAfter(second);
    expect(taken?.id).toBe(armed.id);
    taken?.fire({ hit: second });
    expect(armed.outcome()).toMatchObject({ status: "reached", evidence: { hit: second } });
  });

  it("reports failed when it could not act, and rejects fired", async () => {
    const plan = new FaultPlan(new WriteLog());
    const armed = plan.arm({ kind: "conflict-before", match: {} });
    plan.takeBefore(candidate({ hasPrecondition: true }))?.fail(new Error("kit write answered 404"));
    expect(armed.outcome()).toEqual({ status: "failed", error: "kit write answered 404" });
    await expect(armed.fired).rejects.toThrow("404");
  });
});

describe("sameWrite and normalisedName", () => {
  it.each([
    [{ name: "web" }, "web"],
    [{ name: "reg-0f0e0d0c-0b0a-0908-0706-050403020100" }, "reg-<uid>"],
    [{ name: "gen-x7k2p", generateName: "gen-" }, "gen-*"],
    [
      {
        name: "a-0f0e0d0c-0b0a-0908-0706-050403020100-xx",
        generateName: "a-0f0e0d0c-0b0a-0908-0706-050403020100-",
      },
      "a-<uid>-*",
    ],
  ])("%j -> %s", (write, expected) => {
    expect(normalisedName(write)).toBe(expected);
  });

  it("compares kind, verb, subresource and normalised name", () => {
    const base = { verb: "update" as const, group: "apps", resource: "deployments", name: "web" };
    expect(sameWrite(base, { ...base })).toBe(true);
    expect(sameWrite(base, { ...base, subresource: "status" })).toBe(false);
    expect(sameWrite(base, { ...base, verb: "patch" })).toBe(false);
    expect(sameWrite(base, { ...base, name: "api" })).toBe(false);
  });
});
