import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderSummary } from "../../src/report/console-reporter.js";
import { renderJUnit } from "../../src/report/junit-report.js";
import { renderMarkdownSummary } from "../../src/report/markdown-summary.js";
import { exitCodeOfReport, type RunReport, type ScenarioReport } from "../../src/report/report-model.js";
import { runExampleOperator } from "../support/example-run.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import { exampleOperatorBinary } from "../support/webapp-example.js";

// The contract's promises and waivers on the example operator, against a real API server: its
// `heartbeat` variant (a status heartbeat every 3 s, a correct operator's legitimate write) with and
// without a volatile field, and the `stale-retry` mutant's real failure waived, expired and stale.
let cluster: TestCluster;
let binary: string;

beforeAll(async () => {
  cluster = await startTestCluster("promises");
  binary = exampleOperatorBinary();
}, 120_000);

afterAll(async () => {
  cluster?.client.close();
  await cluster?.provider.delete();
});

const scenarioOf = (report: RunReport, check: string): ScenarioReport => {
  const found = report.checks.find((c) => c.id === check)?.scenarios[0];
  if (!found) throw new Error(`no scenario of ${check} in the report`);
  return found;
};

/** The example operator with `--bug=<bug>` on one suite, the contract extended as given. */
const runMutant = (
  bug: string,
  suite: string,
  options: { strict: boolean; checks?: string[]; contract?: Record<string, unknown> },
): Promise<RunReport> => runExampleOperator(cluster, binary, { bug, suites: [suite], ...options });

/** The judge's notes, without the line every verdict carries on how its waits were decided. */
const judgeNotes = (scenario: ScenarioReport) =>
  (scenario.evidence?.notes ?? []).filter((note) => !note.startsWith("quiescence: "));
const writesOf = (scenario: ScenarioReport) => (scenario.evidence?.writes ?? []) as Record<string, unknown>[];

const HEARTBEAT_PROMISE = {
  promises: [
    {
      kind: "WebApp",
      volatile: [{ path: "status.lastHeartbeatTime", reason: "the operator stamps a heartbeat every 3 s" }],
    },
  ],
};

describe("promises: volatile fields", () => {
  it(
    "without a promise, the heartbeat fails no-avoidable-writes, and the write log names the field it changed",
    { timeout: 180_000 },
    async () => {
      const report = await runMutant("heartbeat", "status-stability", { strict: false });
      const avoidable = scenarioOf(report, "status-stability/no-avoidable-writes");
      expect(avoidable.status, avoidable.message).toBe("failed");
      const writes = writesOf(avoidable);
      expect(writes.length).toBeGreaterThan(0);
      for (const write of writes) {
        expect(write.write).toBe("update webapps.demo.reconcile-conformance.dev/hello/status");
        expect(write.effect).toBe("changed");
        expect(write.changed).toEqual(["status.lastHeartbeatTime"]);
      }
      expect(scenarioOf(report, "status-stability/no-redundant-writes").status).toBe("warned");
      expect(scenarioOf(report, "status-stability/last-transition-time").status).toBe("passed");
      expect(exitCodeOfReport(report)).toBe(1);
    },
  );

  it(
    "with status.lastHeartbeatTime volatile, no-avoidable-writes passes and says which writes it allowed; no-redundant-writes still warns",
    { timeout: 180_000 },
    async () => {
      const report = await runMutant("heartbeat", "status-stability", {
        strict: false,
        contract: HEARTBEAT_PROMISE,
      });
      const avoidable = scenarioOf(report, "status-stability/no-avoidable-writes");
      expect(avoidable.status, avoidable.message).toBe("passed");
      expect(avoidable.message).toMatch(/[1-9]\d* allowed by its promises/);
      const notes = judgeNotes(avoidable);
      expect(notes.length).toBeGreaterThan(0);
      for (const note of notes) {
        expect(note).toMatch(
          /^not counted: #\d+ update webapps\/hello\/status changed only volatile fields: status\.lastHeartbeatTime \(promises\[0\]: the operator stamps a heartbeat every 3 s\)$/,
        );
      }
      const redundant = scenarioOf(report, "status-stability/no-redundant-writes");
      expect(redundant.status).toBe("warned");
      expect(writesOf(redundant).length).toBe(notes.length);
      expect(report.status).toBe("warned");
      expect(exitCodeOfReport(report)).toBe(0);
    },
  );

  it(
    "a volatile field of another object excuses nothing: the heartbeat still fails",
    { timeout: 180_000 },
    async () => {
      const report = await runMutant("heartbeat", "status-stability", {
        strict: false,
        checks: ["status-stability/no-avoidable-writes"],
        contract: {
          promises: [
            {
              kind: "Deployment",
              volatile: [{ path: "status.lastHeartbeatTime", reason: "not the WebApp's" }],
            },
            { kind: "WebApp", volatile: [{ path: "status.lastSeen", reason: "another field" }] },
          ],
        },
      });
      expect(scenarioOf(report, "status-stability/no-avoidable-writes").status).toBe("failed");
    },
  );
});

describe("promises: a volatile lastTransitionTime", () => {
  it(
    "lets status-every-reconcile's restamped Ready time pass last-transition-time and no-avoidable-writes, each write named",
    { timeout: 180_000 },
    async () => {
      const checks = ["status-stability/last-transition-time", "status-stability/no-avoidable-writes"];
      const without = await runMutant("status-every-reconcile", "status-stability", {
        strict: false,
        checks,
      });
      expect(scenarioOf(without, checks[0] ?? "").status).toBe("failed");
      const report = await runMutant("status-every-reconcile", "status-stability", {
        strict: false,
        checks,
        contract: {
          promises: [
            {
              kind: "WebApp",
              volatile: [
                { path: "status.conditions[type=Ready].lastTransitionTime", reason: "restamped on purpose" },
              ],
            },
          ],
        },
      });
      const ltt = scenarioOf(report, "status-stability/last-transition-time");
      expect(ltt.status, ltt.message).toBe("passed");
      expect(ltt.message).toBe("0 condition(s) kept their lastTransitionTime (1 volatile by the contract)");
      expect(judgeNotes(ltt)).toEqual([
        "not counted: condition Ready got a new lastTransitionTime in a volatile field: status.conditions[type=Ready].lastTransitionTime (promises[0]: restamped on purpose)",
      ]);
      const avoidable = scenarioOf(report, "status-stability/no-avoidable-writes");
      expect(avoidable.status, avoidable.message).toBe("passed");
      expect(writesOf(avoidable).length).toBeGreaterThan(0);
      for (const write of writesOf(avoidable)) {
        expect(write.changed).toEqual(["status.conditions[type=Ready].lastTransitionTime"]);
      }
    },
  );
});

describe("promises: a withdrawn uid", () => {
  it(
    "excuses recreate-on-already-exists's recreated Service in own-create-unseen, naming it, and nothing of the other kinds",
    { timeout: 180_000 },
    async () => {
      const report = await runMutant("recreate-on-already-exists", "staleness", {
        strict: true,
        checks: ["staleness/own-create-unseen"],
        contract: {
          promises: [
            { kind: "Service", keeps: ["resourceVersion", "generation"], reason: "recreated by design" },
          ],
        },
      });
      const scenarios = report.checks.find((c) => c.id === "staleness/own-create-unseen")?.scenarios ?? [];
      const services = scenarios.find((s) => s.target === "services");
      expect(services?.status, services?.message).toBe("passed");
      const notes = services?.evidence?.notes ?? [];
      const excused = (pattern: RegExp) => notes.some((n) => pattern.test(n));
      expect(
        excused(
          /^not counted: it deleted services\/hello \(write \d+, uid [0-9a-f-]+\): Service\/hello does not promise uid \(promises\[0\]: recreated by design\)$/,
        ),
        notes.join("\n"),
      ).toBe(true);
      expect(
        notes.some((n) =>
          /^not counted: services\/hello was recreated \(uid .* -> .*\): Service\/hello does not promise uid \(promises\[0\]: recreated by design\)$/.test(
            n,
          ),
        ),
      ).toBe(true);
      const deployments = scenarios.find((s) => s.target === "deployments");
      expect(deployments?.status).toBe("failed");
      expect(deployments?.message).toContain("deployments/hello");
    },
  );
});

describe("waivers", () => {
  const farFuture = "2999-12-31";

  it(
    "turn a mutant's real failure into waived (exit 0), and report a waiver that matched nothing as stale",
    { timeout: 240_000 },
    async () => {
      const report = await runMutant("stale-retry", "conflict", {
        strict: true,
        contract: {
          waivers: [
            { check: "conflict/child-update", reason: "retry fix lands in #42", until: farFuture },
            { check: "conflict/status-update", reason: "flaked once" },
          ],
        },
      });
      const child = report.checks.find((c) => c.id === "conflict/child-update");
      expect(child?.status).toBe("waived");
      const waived = child?.scenarios.filter((s) => s.status === "waived") ?? [];
      expect(waived.length).toBeGreaterThan(0);
      for (const scenario of waived) {
        // The verdict and its evidence are kept: only the status says it is accepted for now.
        expect(scenario.waived).toEqual({
          rule: "waivers[0]",
          reason: "retry fix lands in #42",
          until: farFuture,
          was: "failed",
        });
        expect(scenario.evidence?.writes?.length ?? 0).toBeGreaterThan(0);
      }
      expect(report.checks.find((c) => c.id === "conflict/status-update")?.status).toBe("passed");
      expect(report.waivers?.map((w) => [w.rule, w.outcome])).toEqual([
        ["waivers[0]", "applied"],
        ["waivers[1]", "stale"],
      ]);
      expect(report.waivers?.[1]?.message).toContain("matched no failure (its scenarios: passed)");
      expect(report.status).toBe("waived");
      expect(exitCodeOfReport(report)).toBe(0);

      const console = renderSummary(report);
      expect(console).toContain("WAIVED       conflict/child-update (MUST)");
      expect(console).toContain(
        "waived by waivers[0] (until 2999-12-31; was failed): retry fix lands in #42",
      );
      expect(console).toMatch(/STALE: waivers\[1\] for conflict\/status-update matched no failure/);
      const junit = renderJUnit(report);
      expect(junit).toContain(
        "<skipped>waived by waivers[0] (until 2999-12-31; was failed): retry fix lands in #42; verdict: ",
      );
      expect(junit).not.toContain("<failure");
      const summary = renderMarkdownSummary(report);
      expect(summary).toContain("### Waivers");
      expect(summary).toMatch(
        /\| <code>waivers&#91;1&#93;<\/code> \| conflict\/status-update \| ⚠️ stale \|/,
      );
    },
  );

  it(
    "past its date, a waiver waives nothing and fails the run, naming it",
    { timeout: 240_000 },
    async () => {
      const report = await runMutant("stale-retry", "conflict", {
        strict: true,
        checks: ["conflict/child-update"],
        contract: {
          waivers: [
            { check: "conflict/child-update", reason: "retry fix lands in #42", until: "2020-01-31" },
          ],
        },
      });
      expect(report.checks.find((c) => c.id === "conflict/child-update")?.status).toBe("failed");
      expect(report.waivers?.map((w) => w.outcome)).toEqual(["expired"]);
      expect(report.waivers?.[0]?.message).toContain(
        "waivers[0] for conflict/child-update expired on 2020-01-31: it waives nothing and fails the run",
      );
      expect(report.status).toBe("failed");
      expect(exitCodeOfReport(report)).toBe(1);
      expect(renderSummary(report)).toContain(
        "EXPIRED: waivers[0] for conflict/child-update expired on 2020-01-31",
      );
    },
  );
});
