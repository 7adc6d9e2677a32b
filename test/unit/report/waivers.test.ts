import { describe, expect, it } from "vitest";
import type { Waiver } from "../../../src/contract/load-contract.js";
import { mergeReports } from "../../../src/report/merge-reports.js";
import {
  exitCodeOfReport,
  type CheckReport,
  type RunReport,
  type ScenarioReport,
} from "../../../src/report/report-model.js";
import { isExpired, runStatus, waiveCheck, waiverOutcomes } from "../../../src/report/waivers.js";

const TODAY = "2026-11-30";

const scenario = (target: string, status: ScenarioReport["status"]): ScenarioReport => ({
  target,
  status,
  message: `${target} ${status}`,
  durationMs: 1,
  evidence: { notes: ["proof"] },
});

const check = (id: string, scenarios: ScenarioReport[], elsewhere?: string[]): CheckReport => ({
  id,
  level: "MUST",
  status: scenarios.some((s) => s.status === "failed") ? "failed" : "passed",
  durationMs: 1,
  docs: `docs/checks/${id}.md`,
  scenarios,
  ...(elsewhere ? { elsewhere } : {}),
});

const waiver = (rule: number, fields: Partial<Waiver> & Pick<Waiver, "check">): Waiver => ({
  rule: `waivers[${rule}]`,
  reason: "known, fix in #1",
  ...fields,
});

/** One shard's report (of two) with one check, judged with `waivers` on `day`, as runKit makes it. */
function shardReport(
  index: number,
  unwaived: CheckReport,
  waivers: readonly Waiver[],
  day = TODAY,
): RunReport {
  const checks = [waiveCheck(unwaived, waivers, day)];
  const outcomes = waiverOutcomes(checks, waivers, day);
  return {
    apiVersion: "reconcile-conformance.dev/v1alpha1",
    kind: "Report",
    status: runStatus(checks, outcomes),
    strict: false,
    startedAt: `${day}T10:00:00.000Z`,
    durationMs: 1,
    contract: "c.yaml",
    cluster: { provider: "kwok" },
    shard: { index, count: 2 },
    checks,
    waivers: outcomes,
  };
}

describe("waivers", () => {
  it("hold through their last day and expire after it", () => {
    expect(isExpired({ until: "2026-11-30" }, TODAY)).toBe(false);
    expect(isExpired({ until: "2026-11-29" }, TODAY)).toBe(true);
    expect(isExpired({}, TODAY)).toBe(false);
  });

  it("waive the failed and warned scenarios they name, keeping verdict and evidence, and nothing else", () => {
    const drift = check("drift/managed-field", [
      scenario("Service/web spec.selector", "failed"),
      scenario("Deployment/web spec.replicas", "failed"),
      scenario("Service/web spec.ports[0].port", "inconclusive"),
      scenario("Deployment/web spec.template", "passed"),
    ]);
    const waived = waiveCheck(
      drift,
      [waiver(0, { check: "drift/managed-field", target: "Service/*", until: "2027-01-01" })],
      TODAY,
    );
    expect(waived.scenarios.map((s) => s.status)).toEqual(["waived", "failed", "inconclusive", "passed"]);
    expect(waived.scenarios[0]).toEqual({
      ...drift.scenarios[0],
      status: "waived",
      waived: { rule: "waivers[0]", reason: "known, fix in #1", until: "2027-01-01", was: "failed" },
    });
    expect(waived.status).toBe("failed");
    const all = waiveCheck(drift, [waiver(0, { check: "drift/managed-field" })], TODAY);
    expect(all.status).toBe("inconclusive");
    expect(waiveCheck(drift, [waiver(0, { check: "drift/deleted-child" })], TODAY)).toBe(drift);
    expect(waiveCheck(drift, [waiver(0, { check: "drift/managed-field", until: "2026-11-01" })], TODAY)).toBe(
      drift,
    );
  });

  it("report each waiver as applied, stale, expired or not run; an expired one fails even a passing run", () => {
    const waivers = [
      waiver(0, { check: "drift/managed-field", target: "Service/*" }),
      waiver(1, { check: "conflict/child-update" }),
      waiver(2, { check: "status-stability/no-avoidable-writes", until: "2026-01-31" }),
      waiver(3, { check: "staleness/own-create-unseen" }),
      waiver(4, { check: "drift/managed-field", target: "ConfigMap/*" }),
    ];
    const checks = [
      check("drift/managed-field", [scenario("Service/web spec.selector", "failed")]),
      check("conflict/child-update", [scenario("Deployment/web", "passed")]),
      check("status-stability/no-avoidable-writes", [scenario("restart and foreign touches", "passed")]),
    ].map((c) => waiveCheck(c, waivers, TODAY));
    const outcomes = waiverOutcomes(checks, waivers, TODAY);
    expect(outcomes.map((w) => [w.rule, w.outcome, w.waived])).toEqual([
      ["waivers[0]", "applied", ["Service/web spec.selector"]],
      ["waivers[1]", "stale", []],
      ["waivers[2]", "expired", []],
      ["waivers[3]", "not-run", []],
      ["waivers[4]", "stale", []],
    ]);
    expect(outcomes[1]?.message).toBe(
      "waivers[1] for conflict/child-update matched no failure (its scenarios: passed): remove it, or narrow it to what still fails",
    );
    expect(outcomes[4]?.message).toContain("no scenario of the check has such a target");
    expect(outcomes[2]?.message).toContain(
      "waivers[2] for status-stability/no-avoidable-writes expired on 2026-01-31",
    );
    expect(runStatus(checks, outcomes)).toBe("failed");
    const withoutExpired = outcomes.filter((w) => w.outcome !== "expired");
    expect(runStatus(checks, withoutExpired)).toBe("waived");
    expect(exitCodeOfReport({ status: runStatus(checks, withoutExpired) })).toBe(0);
  });

  it("in a shard, leave a waiver whose scenarios ran elsewhere to the merge, which finds it applied", () => {
    const waivers = [waiver(0, { check: "drift/managed-field", target: "Service/*" })];
    const shard = (index: number, scenarios: ScenarioReport[], elsewhere: string[]) =>
      shardReport(index, check("drift/managed-field", scenarios, elsewhere), waivers);
    const one = shard(1, [scenario("Deployment/web spec.replicas", "passed")], ["Service/web spec.selector"]);
    const two = shard(2, [scenario("Service/web spec.selector", "failed")], ["Deployment/web spec.replicas"]);
    expect(one.waivers?.[0]?.outcome).toBe("not-run");
    expect(two.waivers?.[0]?.outcome).toBe("applied");
    const merged = mergeReports([
      { file: "1.json", report: one },
      { file: "2.json", report: two },
    ]);
    expect(merged.waivers?.map((w) => [w.outcome, w.waived])).toEqual([
      ["applied", ["Service/web spec.selector"]],
    ]);
    expect(merged.status).toBe("waived");
  });
});

describe("waivers, more", () => {
  it("report a waiver shadowed by an earlier one as stale, naming the one that waived", () => {
    const waivers = [
      waiver(0, { check: "drift/managed-field" }),
      waiver(1, { check: "drift/managed-field", target: "Service/*" }),
    ];
    const checks = [check("drift/managed-field", [scenario("Service/web spec.selector", "failed")])].map(
      (c) => waiveCheck(c, waivers, TODAY),
    );
    const outcomes = waiverOutcomes(checks, waivers, TODAY);
    expect(outcomes.map((w) => w.outcome)).toEqual(["applied", "stale"]);
    expect(outcomes[1]?.message).toBe(
      'waivers[1] for drift/managed-field (targets "Service/*") waived nothing: waivers[0], earlier in the contract, waived the failures it names; remove it, or merge the two',
    );
  });

  it("give a merged run's scenarios their verdicts back when a waiver one shard applied has expired by another's day", () => {
    const waivers = [waiver(0, { check: "drift/managed-field", until: TODAY })];
    const shard = (index: number, day: string, scenarios: ScenarioReport[]) =>
      shardReport(index, check("drift/managed-field", scenarios), waivers, day);
    const early = shard(1, TODAY, [scenario("Service/web spec.selector", "failed")]);
    const late = shard(2, "2026-12-01", [scenario("Deployment/web spec.replicas", "passed")]);
    expect(early.status).toBe("waived");
    expect(late.status).toBe("failed");
    const merged = mergeReports([
      { file: "1.json", report: early },
      { file: "2.json", report: late },
    ]);
    const selector = merged.checks[0]?.scenarios.find((s) => s.target === "Service/web spec.selector");
    expect(selector?.status).toBe("failed");
    expect(selector?.waived).toBeUndefined();
    expect(merged.waivers?.map((w) => w.outcome)).toEqual(["expired"]);
    expect(merged.status).toBe("failed");
  });

  it("lets a waived verdict win a merge over nothing worse only: an inconclusive one beats it", () => {
    const waivers = [waiver(0, { check: "cluster/optimistic-concurrency" })];
    const shard = (index: number, status: ScenarioReport["status"]) =>
      shardReport(
        index,
        check("cluster/optimistic-concurrency", [scenario("ConfigMap stale replace", status)]),
        waivers,
      );
    const merged = mergeReports([
      { file: "1.json", report: shard(1, "inconclusive") },
      { file: "2.json", report: shard(2, "failed") },
    ]);
    expect(merged.checks[0]?.scenarios.map((s) => s.status)).toEqual(["inconclusive"]);
    expect(merged.status).toBe("inconclusive");
  });
});
