import { describe, expect, it } from "vitest";
import { loadContract } from "../../../../src/contract/load-contract.js";
import { resolvePromises } from "../../../../src/contract/promises.js";
import type { ClockMark, WriteEntry } from "../../../../src/proxy/write-log.js";
import type { SpecReference } from "../../../../src/scenario/spec-references.js";
import {
  judgeTickOverwrites,
  noTickOverwrite,
  tickOverwrites,
  type TickLives,
} from "../../../../src/suites/idempotency/no-tick-overwrite.js";
import { writeEntry } from "../../../support/write-entry.js";

const contract = await loadContract("examples/webapp-operator/reconcile-conformance.yaml");

/** A mark of the operator's clock: a write 5 s after its last one, a delayed requeue pending. */
const mark = (fields: Partial<ClockMark> = {}): ClockMark => ({
  quietSinceSeq: 1,
  quietSince: "2026-12-07T12:00:00.000Z",
  afterMs: 5_000,
  by: "queues",
  pending: "its last reconcile asked for a delayed requeue (RequeueAfter)",
  ...fields,
});

/** An operator write to ConfigMap ns/<name>, by its clock when `clock` is given. */
const configMap = (seq: number, name: string, fields: Partial<WriteEntry> = {}): WriteEntry =>
  writeEntry({
    seq,
    time: `2026-12-07T12:00:${String(seq).padStart(2, "0")}.000Z`,
    group: "",
    resource: "configmaps",
    name,
    ...fields,
  });
const tickCreate = (seq: number, name: string) =>
  configMap(seq, name, { verb: "create", code: 201, effect: "created", clock: mark() });
const tickUpdate = (seq: number, name: string, changedPaths: string[] | undefined, firing?: number) =>
  configMap(seq, name, {
    verb: "update",
    effect: "changed",
    ...(changedPaths ? { changedPaths } : {}),
    clock: mark(firing === undefined ? {} : { firing }),
  });
const lives = (...writes: WriteEntry[][]): TickLives => ({
  lives: writes.map((w, i) => ({ name: `life ${i + 1}`, writes: w })),
  children: [],
});

describe("no-tick-overwrite: what the ticks did to one another's objects", () => {
  it("passes a schedule whose every tick creates an object of its own", () => {
    const found = tickOverwrites(lives([tickCreate(5, "web-tick-1"), tickCreate(10, "web-tick-2")]).lives);
    expect(found).toMatchObject({ ticks: 2, overwrites: [], collisions: [] });
    expect(
      judgeTickOverwrites(lives([tickCreate(5, "web-tick-1"), tickCreate(10, "web-tick-2")]), contract),
    ).toMatchObject({
      status: "passed",
    });
  });

  it("fails a later tick that rewrites the data an earlier tick created, naming both writes", () => {
    const observation = lives([
      tickCreate(5, "web-tick"),
      tickUpdate(10, "web-tick", ["data.tick", "data.at"]),
    ]);
    const verdict = judgeTickOverwrites(observation, contract);
    expect(verdict.status).toBe("failed");
    expect(verdict.evidence?.writes).toMatchObject([{ seq: 5 }, { seq: 10 }]);
    expect(verdict.evidence?.notes?.[0]).toMatch(
      /life 1: #10 update configmaps\/web-tick changed configmaps\/web-tick, which an earlier tick created \(write 5/,
    );
  });

  it("fails a later tick's create refused because an earlier tick's object has the name", () => {
    const refused = configMap(10, "web-tick", {
      verb: "create",
      code: 409,
      reason: "AlreadyExists",
      effect: "rejected",
      clock: mark(),
    });
    const verdict = judgeTickOverwrites(lives([tickCreate(5, "web-tick"), refused]), contract);
    expect(verdict.status).toBe("failed");
    expect(verdict.evidence?.notes?.[0]).toMatch(/was refused \(AlreadyExists\) for configmaps\/web-tick/);
  });

  it("does not count the writes of the tick that created the object (its own burst)", () => {
    const found = tickOverwrites(
      lives([tickCreate(5, "web-tick-1"), tickUpdate(6, "web-tick-1", ["data.tick"], 5)]).lives,
    );
    expect(found.overwrites).toEqual([]);
  });

  it("does not count a change the kit's stimulus caused, nor one of an object no tick created", () => {
    const byKit = configMap(10, "web-tick-1", { effect: "changed", changedPaths: ["data.tick"] });
    const renewal = tickUpdate(12, "web-cert", ["data.tls.crt"]);
    const created = configMap(2, "web-cert", { verb: "create", code: 201, effect: "created" });
    const found = tickOverwrites(lives([created, tickCreate(5, "web-tick-1"), byKit, renewal]).lives);
    expect(found).toMatchObject({ ticks: 2, overwrites: [], collisions: [] });
  });

  it("takes an object deleted and created again for a new one (a history limit prunes, a tick reuses the name)", () => {
    const pruned = configMap(8, "web-tick", { verb: "delete", effect: "deleted", clock: mark() });
    const again = tickCreate(10, "web-tick");
    const rewrite = tickUpdate(11, "web-tick", ["data.tick"], 10);
    expect(
      tickOverwrites(lives([tickCreate(5, "web-tick"), pruned, again, rewrite]).lives).overwrites,
    ).toEqual([]);
  });

  it("keeps the lives apart: the same name in two lives is two objects", () => {
    const found = tickOverwrites(
      lives([tickCreate(5, "web-tick")], [tickUpdate(10, "web-tick", ["data.tick"])]).lives,
    );
    expect(found.overwrites).toEqual([]);
  });

  it("does not count a change of metadata only (a label that marks an old tick done)", () => {
    const verdict = judgeTickOverwrites(
      lives([tickCreate(5, "web-tick-1"), tickUpdate(10, "web-tick-1", ["metadata.labels.done"])]),
      contract,
    );
    expect(verdict.status).toBe("passed");
    expect(verdict.evidence?.notes?.[0]).toMatch(/^not counted \(metadata only\)/);
  });

  it("is inconclusive on a change whose fields could not be read: it may have been metadata only", () => {
    const verdict = judgeTickOverwrites(
      lives([tickCreate(5, "web-tick"), tickUpdate(10, "web-tick", undefined)]),
      contract,
    );
    expect(verdict.status).toBe("inconclusive");
    expect(verdict.message).toMatch(/which fields could not be read/);
  });

  it("does not count a rewrite of fields the contract declares volatile for the kind", () => {
    const promised = {
      ...contract,
      promises: resolvePromises([
        {
          kind: "ConfigMap",
          keeps: ["resourceVersion", "uid", "generation"],
          volatile: [{ path: "data.tick", reason: "a renewal in place" }],
        },
      ]),
    };
    const observation: TickLives = {
      ...lives([tickCreate(5, "web-tick"), tickUpdate(10, "web-tick", ["data.tick"])]),
      children: [
        { group: "", resource: "configmaps", ref: { apiVersion: "v1", kind: "ConfigMap", name: "web-tick" } },
      ],
    };
    const verdict = judgeTickOverwrites(observation, promised);
    expect(verdict.status).toBe("passed");
    expect(verdict.evidence?.notes?.[0]).toMatch(
      /^not counted: #10 update configmaps\/web-tick changed only volatile fields/,
    );
  });
});

describe("no-tick-overwrite: clock.onePerTick", () => {
  const records = { ...contract, clock: { onePerTick: [{ kind: "ConfigMap", name: "web-tick*" }] } };
  const children = [
    { group: "", resource: "configmaps", ref: { apiVersion: "v1", kind: "ConfigMap", name: "web-tick" } },
  ];
  // Tick 1 came amid the answer to the sample's create: its create is not told as the clock's.
  const amid = configMap(5, "web-tick", { verb: "create", code: 201, effect: "created" });

  it("judges a record whose create was not told as a tick's, when the contract declares its kind", () => {
    const observation = { ...lives([amid, tickUpdate(10, "web-tick", ["data.tick"])]), children };
    expect(judgeTickOverwrites(observation, contract).status).toBe("passed");
    const verdict = judgeTickOverwrites(observation, records);
    expect(verdict.status).toBe("failed");
    expect(verdict.evidence?.notes?.[0]).toMatch(
      /amid other work; a tick's record by the contract's clock.onePerTick/,
    );
  });

  it("leaves objects of the kind whose name the pattern does not match alone", () => {
    const observation = {
      ...lives([
        configMap(5, "web-cert", { verb: "create", code: 201, effect: "created" }),
        tickUpdate(10, "web-cert", ["data.crt"]),
      ]),
      children,
    };
    expect(judgeTickOverwrites(observation, records).status).toBe("passed");
  });

  it("never counts what the creating answer itself wrote, or what the kit caused", () => {
    const answer = configMap(6, "web-tick", { effect: "changed", changedPaths: ["data.tick"] });
    expect(judgeTickOverwrites({ ...lives([amid, answer]), children }, records).status).toBe("passed");
  });
});

describe("no-tick-overwrite: its target", () => {
  const reference = (writes: WriteEntry[], delayedRequeue = false): SpecReference => ({
    spec: 0,
    namespace: "ref",
    customResource: { apiVersion: "v1", kind: "WebApp", metadata: { name: "web" } },
    children: [],
    writes,
    specWrites: [{ spec: 0, seq: 0 }],
    secondLife: { namespace: "ref-2", writes: [tickCreate(7, "web-tick-1")] },
    ...(delayedRequeue ? { delayedRequeue: true as const } : {}),
  });
  const targets = (r: SpecReference) => noTickOverwrite.targets({ contract, references: new Map([[0, r]]) });

  it("is both fault-free lives of spec 0, when a tick of the clock created something", () => {
    const target = targets(reference([]));
    if ("skip" in target) throw new Error(target.skip);
    expect(target[0]?.lives.map((l) => l.name)).toEqual([
      "the reference of spec 0",
      "the second fault-free life of spec 0",
    ]);
  });

  it("is skipped when the clock created nothing, saying to set a horizon when a requeue was pending", () => {
    const secondLife = { namespace: "ref-2", writes: [] };
    expect(targets({ ...reference([], true), secondLife })).toMatchObject({
      skip: expect.stringMatching(/set clock.horizon/) as unknown,
    });
    expect(targets({ ...reference([]), secondLife })).toMatchObject({
      skip: "the operator's clock wrote nothing in the fault-free lives",
    });
  });
});
