import { describe, expect, it } from "vitest";
import { reasonFor, statusReason } from "../../../src/proxy/write-answers.js";
import { readWrite, writeEntryOf, type IncomingWrite } from "../../../src/proxy/write-request.js";

// What a write is, read once from the request, and the log entry it becomes.
const incoming = (fields: Partial<IncomingWrite>): IncomingWrite => ({
  actor: "operator",
  run: 1,
  method: "POST",
  url: "/api/v1/namespaces/ns/services?fieldManager=op",
  headers: { "content-type": "application/json" },
  body: Buffer.from(JSON.stringify({ metadata: { name: "web", ownerReferences: [{ uid: "o-1" }] } })),
  time: "t",
  ...fields,
});

describe("readWrite", () => {
  it("names a create's object from its body, and reads its owners and field manager", () => {
    const read = readWrite(incoming({}), () => undefined);
    expect(read.info).toMatchObject({ verb: "create", resource: "services", namespace: "ns", name: "web" });
    expect(read.ownerUids).toEqual(["o-1"]);
    expect(read.fieldManager).toBe("op");
    expect(read.dryRun).toBe(false);
  });

  it("takes owners an earlier write showed when this one names none, and sees a dry run and a precondition", () => {
    const read = readWrite(
      incoming({
        method: "PUT",
        url: "/api/v1/namespaces/ns/services/web?dryRun=All",
        body: Buffer.from(JSON.stringify({ metadata: { name: "web", resourceVersion: "7" } })),
      }),
      (key) => (key === "/services/ns/web" ? ["o-2"] : undefined),
    );
    expect(read.ownerUids).toEqual(["o-2"]);
    expect(read.dryRun).toBe(true);
    expect(read.precondition).toBe("7");
  });
});

describe("writeEntryOf", () => {
  it("is the request's identity and what came of it, a Secret's values hashed", () => {
    const read = readWrite(
      incoming({
        url: "/api/v1/namespaces/ns/secrets",
        body: Buffer.from(JSON.stringify({ metadata: { name: "s" }, data: { password: "aHVudGVyMg==" } })),
      }),
      () => undefined,
    );
    const entry = writeEntryOf(read, 3, { code: 201 }, { effect: "created" });
    expect(entry).toMatchObject({ seq: 3, actor: "operator", run: 1, verb: "create", name: "s", code: 201 });
    expect(entry.effect).toBe("created");
    expect(JSON.stringify(entry.body)).not.toContain("aHVudGVyMg==");
  });
});

describe("write answers", () => {
  it.each<[number, string]>([
    [429, "TooManyRequests"],
    [409, "Conflict"],
    [504, "Timeout"],
    [500, "InternalError"],
    [400, "BadRequest"],
  ])("a made-up %d says %s", (status, reason) => {
    expect(reasonFor(status)).toBe(reason);
  });

  it("reads a JSON Status's reason", () => {
    const answer = {
      status: 409,
      headers: { "content-type": "application/json" },
      body: Buffer.from(JSON.stringify({ kind: "Status", reason: "AlreadyExists" })),
    };
    expect(statusReason(answer)).toBe("AlreadyExists");
  });
});
