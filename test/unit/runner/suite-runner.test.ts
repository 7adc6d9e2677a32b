import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/util/logger.js";
import type { Contract } from "../../../src/contract/load-contract.js";
import { runSuite, type SuiteContext } from "../../../src/runner/suite-runner.js";
import { Inconclusive, type ScenarioDeps } from "../../../src/scenario/scenario.js";
import type { SpecReference } from "../../../src/scenario/spec-references.js";
import { defineCheck, type Observer, type Suite } from "../../../src/suites/check.js";

// The generic suite runner on checks whose observers open no scenario: the order of verdicts,
// skips, reference failures, shared scenarios, shards and --scenario, without a cluster.
const contract = { updates: [] } as unknown as Contract;
const workDir = mkdtempSync(join(tmpdir(), "rc-suite-runner-"));

function context(
  overrides: Partial<SuiteContext> = {},
  failing: ReadonlySet<number> = new Set(),
): SuiteContext {
  const controller = new AbortController();
  return {
    deps: { contract, signal: controller.signal, workDir, logger: silentLogger } as unknown as ScenarioDeps,
    references: {
      forSpec: (spec: number) =>
        failing.has(spec)
          ? Promise.reject(new Inconclusive(`spec ${spec} never converged`, ["operator: boom"]))
          : Promise.resolve({ spec, children: [] } as unknown as SpecReference),
    },
    clock: { now: () => 0 },
    progress: () => undefined,
    // Finishing in reverse order must not reorder the verdicts.
    sideBySide: async (items, task) => {
      const results = await Promise.all([...items].reverse().map(task));
      return results.reverse();
    },
    shard: { index: 1, count: 1 },
    ...overrides,
  };
}

/** An observer that records what it was asked to observe and echoes the target. */
function echo(name: string, seen: string[]): Observer<string, string, "extra"> {
  return {
    scenario: name,
    observe: async (ctx, target) => {
      seen.push(`${target}${ctx.phases.has("extra") ? "+extra" : ""}`);
      await Promise.resolve();
      if (target === "throws-inconclusive") throw new Inconclusive("could not stimulate", ["note"]);
      if (target === "throws") throw new Error("socket hang up");
      return target;
    },
  };
}

function check(id: string, observer: Observer<string, string, "extra">, targets: string[], more = {}) {
  return defineCheck<string, string, "extra">({
    id,
    level: "MUST",
    summary: id,
    targets: () => targets,
    targetName: (t) => t,
    observer,
    judge: (observation) => ({ status: "passed", message: `judged ${observation}` }),
    ...more,
  });
}

const suite = (...checks: ReturnType<typeof check>[]): Suite => ({ name: "drift", summary: "", checks });
const all = (s: Suite) => new Set(s.checks.map((c) => c.id));
const brief = (r: { check: string; target: string; status: string; message: string }) =>
  `${r.check} ${r.target}: ${r.status} ${r.message}`;

describe("runSuite", () => {
  it("judges each target's scenario, in target order, skips first where the check says", async () => {
    const seen: string[] = [];
    const s = suite(
      check("drift/a", echo("a", seen), ["t1", "t2", "t3"], {
        skipTarget: (t: string) => (t === "t2" ? "not this one" : undefined),
      }),
      check("drift/b", echo("b", seen), [], { skip: () => ({ target: "contract", skip: "no updates" }) }),
    );
    const results = await runSuite(s, context(), all(s));
    expect(results.map(brief)).toEqual([
      "drift/a t1: passed judged t1",
      "drift/a t2: skipped not this one",
      "drift/a t3: passed judged t3",
      "drift/b contract: skipped no updates",
    ]);
    expect(seen.sort()).toEqual(["t1", "t3"]);
  });

  it("records a scenario's observation and verdicts, Secret values as hashes", async () => {
    const secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s" },
      data: { password: "aHVudGVyMg==" },
    };
    const s: Suite = {
      name: "drift",
      summary: "",
      checks: [
        defineCheck({
          id: "drift/a",
          level: "MUST",
          summary: "",
          targets: () => ["t1"],
          targetName: (t: string) => t,
          observer: {
            scenario: "recorded",
            observe: () =>
              Promise.resolve({
                children: [secret],
                target: {
                  kind: "Secret",
                  path: ["data", "password"],
                  value: "aHVudGVyMg==",
                  perturbed: "x-drift",
                },
              }),
          },
          judge: () => ({ status: "failed", message: "because" }),
        }),
      ],
    };
    await runSuite(s, context(), all(s));
    const recorded = JSON.parse(readFileSync(join(workDir, "recorded", "observation.json"), "utf8")) as {
      target: string;
      verdicts: unknown[];
      observation: {
        children: { data: { password: string } }[];
        target: { value: string; perturbed: string };
      };
    };
    expect(recorded.target).toBe("t1");
    expect(recorded.verdicts).toEqual([{ check: "drift/a", status: "failed", message: "because" }]);
    expect(recorded.observation.children[0]?.data.password).toMatch(/^hmac:[0-9a-f]{12}$/);
    expect(recorded.observation.target.value).toBe(recorded.observation.children[0]?.data.password);
    expect(recorded.observation.target.perturbed).toMatch(/^hmac:[0-9a-f]{12}$/);
  });

  it("says why a check has no targets", async () => {
    const s = suite(
      check("drift/a", echo("a", []), [], { targets: () => ({ target: "children", skip: "no child" }) }),
    );
    expect((await runSuite(s, context(), all(s))).map(brief)).toEqual(["drift/a children: skipped no child"]);
  });

  it("makes a check whose reference failed inconclusive, unless it judges the failure itself", async () => {
    const seen: string[] = [];
    const s = suite(
      check("drift/a", echo("a", seen), ["t1"], { references: () => [1] }),
      check("drift/b", echo("b", seen), ["t1"], {
        references: () => [1],
        judgeWithoutReference: (error: unknown) =>
          error instanceof Inconclusive
            ? { status: "failed", message: `seen in the reference: ${error.message}` }
            : undefined,
      }),
      check("drift/c", echo("c", seen), ["t1"], { references: () => [0] }),
    );
    const results = await runSuite(s, context({}, new Set([1])), all(s));
    expect(results.map(brief)).toEqual([
      "drift/a reference state: inconclusive spec 1 never converged",
      "drift/b reference state: failed seen in the reference: spec 1 never converged",
      "drift/c t1: passed judged t1",
    ]);
    expect(results[0]?.evidence?.notes).toEqual(["operator: boom"]);
    expect(seen).toEqual(["t1"]);
  });

  it("observes a shared scenario once for all the checks that share it, with the phases they need", async () => {
    const seen: string[] = [];
    const shared = echo("shared", seen);
    const s = suite(
      check("drift/a", shared, ["one"]),
      check("drift/b", shared, ["one"], { needs: ["extra"] }),
      check("drift/c", echo("own", seen), ["one"]),
    );
    const results = await runSuite(s, context(), all(s));
    expect(results.map(brief)).toEqual([
      "drift/a one: passed judged one",
      "drift/b one: passed judged one",
      "drift/c one: passed judged one",
    ]);
    expect(seen.sort()).toEqual(["one", "one+extra"]);
  });

  it("makes every check of a scenario that threw inconclusive, with the reason", async () => {
    const shared = echo("shared", []);
    const s = suite(
      check("drift/a", shared, ["throws-inconclusive", "throws"]),
      check("drift/b", shared, ["throws"]),
    );
    const results = await runSuite(s, context(), all(s));
    expect(results.map(brief)).toEqual([
      "drift/a throws-inconclusive: inconclusive could not stimulate",
      "drift/a throws: inconclusive the scenario could not run: socket hang up",
      "drift/b throws: inconclusive the scenario could not run: socket hang up",
    ]);
    expect(results[0]?.evidence?.notes).toEqual(["note"]);
  });

  it("attempts a scenario once more when a judgement says a second attempt may decide, and no more", async () => {
    let attempts = 0;
    const racy: Observer<string, string, "extra"> = {
      scenario: "racy",
      observe: async (_ctx, target) => {
        attempts += 1;
        await Promise.resolve();
        return `${target} attempt ${attempts}`;
      },
    };
    const undecidedUntil = (attempt: number) =>
      check("drift/a", racy, ["t"], {
        judge: (observation: string) =>
          Number(observation.slice(-1)) >= attempt
            ? { status: "passed", message: `judged ${observation}`, evidence: { notes: ["second's own"] } }
            : {
                status: "inconclusive",
                message: `cannot tell in ${observation}`,
                evidence: { notes: ["what was seen"] },
                attemptAgain: "a race",
              },
      });
    const decided = await runSuite(suite(undecidedUntil(2)), context(), new Set(["drift/a"]));
    expect(attempts).toBe(2);
    expect(decided.map(brief)).toEqual(["drift/a t: passed judged t attempt 2"]);
    expect(decided[0]?.evidence?.notes).toEqual([
      "a first attempt of this scenario was inconclusive: cannot tell in t attempt 1; attempted again because a race",
      "first attempt: what was seen",
      "second's own",
    ]);
    expect(decided[0]).not.toHaveProperty("attemptAgain");

    attempts = 0;
    const never = await runSuite(suite(undecidedUntil(9)), context(), new Set(["drift/a"]));
    expect(attempts).toBe(2);
    expect(never.map(brief)).toEqual(["drift/a t: inconclusive cannot tell in t attempt 2"]);
    expect(never[0]).not.toHaveProperty("attemptAgain");

    attempts = 0;
    const plain = check("drift/a", racy, ["t"], {
      judge: () => ({ status: "inconclusive", message: "not reached" }),
    });
    await runSuite(suite(plain), context(), new Set(["drift/a"]));
    expect(attempts).toBe(1);
  });

  it("lets an abort go on up", async () => {
    const controller = new AbortController();
    controller.abort();
    const s = suite(check("drift/a", echo("a", []), ["throws"]));
    const aborted = context({
      deps: { contract, signal: controller.signal, workDir, logger: silentLogger } as unknown as ScenarioDeps,
    });
    await expect(runSuite(s, aborted, all(s))).rejects.toThrow("socket hang up");
  });

  it("runs each scenario in exactly one shard, a shared one under the suite's first check that observes it", async () => {
    const shared = echo("shared", []);
    const targets = Array.from({ length: 12 }, (_, i) => `t${i}`);
    const s = suite(
      check("drift/a", shared, targets),
      check("drift/b", shared, targets),
      check("drift/c", echo("c", []), targets),
    );
    const shards = await Promise.all(
      [1, 2, 3].map((index) => runSuite(s, context({ shard: { index, count: 3 } }), all(s))),
    );
    for (const id of ["drift/a", "drift/b", "drift/c"]) {
      for (const target of targets) {
        const ran = shards.filter((r) =>
          r.some((v) => v.check === id && v.target === target && !v.elsewhere),
        );
        expect(ran, `${id} ${target}`).toHaveLength(1);
      }
    }
    // drift/b never leads: its share is drift/a's, whether or not drift/a is selected.
    for (const [i, results] of shards.entries()) {
      const shard = { index: i + 1, count: 3 };
      const onlyB = await runSuite(s, context({ shard }), new Set(["drift/b"]));
      expect(onlyB.filter((v) => !v.elsewhere).map((v) => v.target)).toEqual(
        results.filter((v) => v.check === "drift/a" && !v.elsewhere).map((v) => v.target),
      );
    }
  });

  it("runs a check that rests on each job's own cluster in every shard", async () => {
    const seen: string[] = [];
    const s = suite(check("drift/a", echo("a", seen), ["t1"], { everyShard: true }));
    for (const index of [1, 2, 3]) {
      const results = await runSuite(s, context({ shard: { index, count: 3 } }), all(s));
      expect(results.map(brief)).toEqual(["drift/a t1: passed judged t1"]);
    }
    expect(seen).toEqual(["t1", "t1", "t1"]);
  });

  it("gives two targets of one check with the same name a scenario each", async () => {
    const seen: string[] = [];
    const s = suite(check("drift/a", echo("a", seen), ["twin", "twin"]));
    expect((await runSuite(s, context(), all(s))).map(brief)).toEqual([
      "drift/a twin: passed judged twin",
      "drift/a twin: passed judged twin",
    ]);
    expect(seen).toEqual(["twin", "twin"]);
  });

  it("opens only the scenario --scenario asks for; the others are placeholders left out of the report", async () => {
    const seen: string[] = [];
    const s = suite(check("drift/a", echo("a", seen), ["t1", "t2"]));
    const results = await runSuite(s, context({ only: "drift/a#t2" }), all(s));
    expect(results.map((r) => [r.target, r.status, r.unselected ?? false])).toEqual([
      ["t1", "skipped", true],
      ["t2", "passed", false],
    ]);
    expect(seen).toEqual(["t2"]);
  });
});
