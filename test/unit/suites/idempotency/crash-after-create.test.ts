import { describe, expect, it } from "vitest";
import { loadContract } from "../../../../src/contract/load-contract.js";
import { Inconclusive, NeverQuiet } from "../../../../src/scenario/scenario.js";
import { crashAfterCreate } from "../../../../src/suites/idempotency/crash-after-create.js";
import { crashAfterWrite } from "../../../../src/suites/idempotency/crash-after-write.js";
import { crashLineCases } from "./crash-line-cases.js";
import { crashLineContext, write } from "./fixtures.js";

const contract = await loadContract("examples/webapp-operator/reconcile-conformance.yaml");

const context = (writes: Parameters<typeof crashLineContext>[1]) => crashLineContext(contract, writes);

describe("crash-after-create: its targets", () => {
  it("takes the creates of the reference's write sequence, named by their crash line", () => {
    const targets = crashAfterCreate.targets(
      context([
        write({ seq: 1, namespace: "ref", verb: "create", code: 201, effect: "created" }),
        write({ seq: 2, namespace: "ref", verb: "update" }),
        write({
          seq: 3,
          namespace: "ref",
          verb: "create",
          resource: "configmaps",
          name: "c",
          effect: "created",
        }),
      ]),
    );
    if ("skip" in targets) throw new Error(targets.skip);
    const lines = targets;
    expect(lines.map((t) => crashAfterCreate.targetName(t))).toEqual([
      "create services/hello",
      "create configmaps/c",
    ]);
    expect(lines[0]?.reference).toHaveLength(1);
  });

  it("takes a child created by a server-side apply too: a create by its effect, not its verb", () => {
    const applies = context([
      write({ seq: 1, namespace: "ref", verb: "patch", patchType: "apply", code: 201, effect: "created" }),
      write({ seq: 2, namespace: "ref", verb: "patch", patchType: "apply", effect: "changed" }),
    ]);
    const creates = crashAfterCreate.targets(applies);
    const others = crashAfterWrite.targets(applies);
    if ("skip" in creates) throw new Error(creates.skip);
    if ("skip" in others) throw new Error(others.skip);
    // A create is a create whatever its verb: its meaning, which the crash's fault selects by, reads so.
    expect(creates.map((t) => crashAfterCreate.targetName(t))).toEqual(["create services/hello"]);
    expect(others.map((t) => crashAfterWrite.targetName(t))).toEqual(["patch services/hello"]);
  });

  it("is skipped when the operator created nothing", () => {
    expect(crashAfterCreate.targets(context([write({ seq: 1, namespace: "ref", verb: "update" })]))).toEqual({
      target: "write sequence",
      skip: "the operator created nothing on its way to the reference",
    });
  });

  it("has an observer of its own, not crash-after-write's (shards assign scenarios by observer)", () => {
    expect(crashAfterCreate.observer).not.toBe(crashAfterWrite.observer);
  });
});

describe("crash-after-create: the judge", () => {
  const line = {
    ordinal: 2,
    id: "#2 create configmaps/c",
    write: write({ seq: 2, verb: "create", resource: "configmaps", name: "c", code: 201, effect: "created" }),
  };
  it.each(crashLineCases(contract, line))("$name", (row) => {
    const judgement = crashAfterCreate.judge(row.observation, row.contract ?? contract);
    expect(judgement.status).toBe(row.status);
    expect(judgement.message).toContain(row.message);
    row.also?.(judgement);
  });
});

describe("crash-after-create: a reference that never fell quiet", () => {
  const creates = (n: number) =>
    Array.from({ length: n }, (_, i) =>
      write({
        seq: i + 1,
        verb: "create",
        resource: "deployments",
        group: "apps",
        name: `web-${i}`,
        generateName: "web-",
        code: 201,
        effect: "created",
      }),
    );
  const neverQuiet = (writes: ReturnType<typeof creates>) =>
    new NeverQuiet(
      "no convergence of the sample within 60 s: Ready=False",
      ["operator: busy"],
      writes,
      false,
    );

  it.each([
    { name: "another error", error: new Error("boom") },
    { name: "an Inconclusive that is not NeverQuiet", error: new Inconclusive("no convergence") },
    { name: "NeverQuiet without runaway creation (4 creates)", error: neverQuiet(creates(4)) },
    {
      name: "NeverQuiet whose writes created nothing",
      error: neverQuiet(creates(6).map((e) => ({ ...e, code: 409, effect: "rejected" as const }))),
    },
  ])("leaves $name to the runner (inconclusive)", ({ error }) => {
    expect(crashAfterCreate.judgeWithoutReference?.(error, contract)).toBeUndefined();
  });

  it("fails an operator that kept creating objects of one name pattern, the last ten creates shown", () => {
    const judgement = crashAfterCreate.judgeWithoutReference?.(neverQuiet(creates(12)), contract);
    expect(judgement?.status).toBe("failed");
    expect(judgement?.message).toBe(
      "without any crash, the operator created deployments.apps/web-* 12 times while the sample was converging, and never fell quiet: every pass creates another (no convergence of the sample within 60 s: Ready=False)",
    );
    expect(judgement?.evidence?.writes?.map((w) => (w as { seq: number }).seq)).toEqual([
      3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
    ]);
    expect(judgement?.evidence?.notes).toEqual([
      "12 create(s) in the wait; the last 10 shown",
      "operator: busy",
    ]);
  });

  it("shows every create when there are fewer than ten", () => {
    const judgement = crashAfterCreate.judgeWithoutReference?.(neverQuiet(creates(5)), contract);
    expect(judgement?.status).toBe("failed");
    expect(judgement?.message).toContain("created deployments.apps/web-* 5 times");
    expect(judgement?.evidence?.notes?.[0]).toBe("5 create(s) in the wait; the last 5 shown");
  });
});
