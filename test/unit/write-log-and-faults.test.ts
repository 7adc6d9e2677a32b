import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FaultPlan } from "../../src/proxy/faults.js";
import { classifyRequest } from "../../src/proxy/request-classifier.js";
import { tagOf, WriteLog, type WriteEntry } from "../../src/proxy/write-log.js";

function entry(log: WriteLog, fields: Partial<WriteEntry>): WriteEntry {
  return {
    seq: log.takeSeq(),
    time: "t",
    verb: "create",
    group: "",
    version: "v1",
    resource: "configmaps",
    code: 201,
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

  it("tags Events and Leases", () => {
    expect(tagOf(classifyRequest("POST", "/api/v1/namespaces/ns/events"))).toBe("event");
    expect(tagOf(classifyRequest("POST", "/apis/events.k8s.io/v1/namespaces/ns/events"))).toBe("event");
    expect(tagOf(classifyRequest("PUT", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l"))).toBe(
      "lease",
    );
    expect(tagOf(classifyRequest("PUT", "/api/v1/namespaces/ns/configmaps/c"))).toBeUndefined();
  });
});

describe("FaultPlan", () => {
  const update = classifyRequest("PUT", "/apis/apps/v1/namespaces/ns/deployments/web");
  const statusUpdate = classifyRequest("PUT", "/apis/apps/v1/namespaces/ns/deployments/web/status");

  it("acts once, on the nth matching write, and reports it", async () => {
    const plan = new FaultPlan();
    const armed = plan.arm({
      kind: "crash-after",
      match: { verb: "update", resource: "deployments", nth: 2 },
    });
    expect(plan.take(update, () => true)).toBeUndefined();
    const taken = plan.take(update, () => true);
    expect(taken?.spec).toBe(armed.spec);
    taken?.fire(7);
    await expect(armed.fired).resolves.toMatchObject({ seq: 7, request: { name: "web" } });
    expect(plan.take(update, () => true)).toBeUndefined();
    expect(plan.pending).toEqual([]);
  });

  it('matches the main resource only with subresource ""', () => {
    const plan = new FaultPlan();
    plan.arm({ kind: "conflict-before", match: { resource: "deployments", subresource: "" } });
    expect(plan.take(statusUpdate, () => true)).toBeUndefined();
    expect(plan.take(update, () => true)).toBeDefined();
  });

  it("does not count writes the fault cannot act on", () => {
    const plan = new FaultPlan();
    plan.arm({ kind: "conflict-before", match: { resource: "deployments" } });
    expect(plan.take(update, () => false)).toBeUndefined(); // e.g. no resourceVersion precondition
    expect(plan.pending).toHaveLength(1);
    expect(plan.take(update, () => true)).toBeDefined();
  });

  it("never fires a disarmed fault", () => {
    const plan = new FaultPlan();
    plan.arm({ kind: "fail-with", status: 500, match: {} }).disarm();
    expect(plan.take(update, () => true)).toBeUndefined();
  });
});
