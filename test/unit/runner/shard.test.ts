import { describe, expect, it } from "vitest";
import { UsageError } from "../../../src/errors.js";
import { mergeReports, type ShardReport } from "../../../src/report/merge-reports.js";
import type { CheckReport, RunReport, ScenarioReport } from "../../../src/report/report-model.js";
import { inShard, parseShard, scenarioKey } from "../../../src/runner/shard.js";

describe("parseShard", () => {
  it("reads i/n", () => {
    expect(parseShard("2/3")).toEqual({ index: 2, count: 3 });
    expect(parseShard(" 1 / 1 ")).toEqual({ index: 1, count: 1 });
  });

  it.each(["0/2", "3/2", "1/0", "2", "a/b", "1/2/3", ""])("refuses %j, naming it", (text) => {
    expect(() => parseShard(text)).toThrow(UsageError);
    expect(() => parseShard(text)).toThrow(JSON.stringify(text));
  });
});

describe("inShard", () => {
  const keys = Array.from({ length: 200 }, (_, i) => scenarioKey("drift/managed-field", `Service/web-${i}`));

  it("gives every scenario to exactly one shard of a split", () => {
    for (const count of [1, 2, 3, 5]) {
      for (const key of keys) {
        const owners = Array.from({ length: count }, (_, i) => i + 1).filter((index) =>
          inShard({ index, count }, key),
        );
        expect(owners).toHaveLength(1);
      }
    }
  });

  it("spreads scenarios over the shards and does not depend on the others", () => {
    const counts = [1, 2, 3].map((index) => keys.filter((k) => inShard({ index, count: 3 }, k)).length);
    for (const n of counts) expect(n).toBeGreaterThan(40);
    // A key's shard depends on the key alone: the same key, computed alone, lands in the same place.
    const alone = [1, 2, 3].filter((index) => inShard({ index, count: 3 }, keys[7] ?? ""));
    expect(alone).toEqual([1, 2, 3].filter((index) => inShard({ index, count: 3 }, keys[7] ?? "")));
    expect(alone).toHaveLength(1);
  });
});

function scenario(target: string, status: ScenarioReport["status"]): ScenarioReport {
  return { target, status, message: `${target} ${status}`, durationMs: 10 };
}

function check(id: string, scenarios: ScenarioReport[], elsewhere: string[] = []): CheckReport {
  return {
    id,
    level: "MUST",
    status: "passed",
    durationMs: 100,
    docs: `docs/checks/${id}.md`,
    scenarios,
    ...(elsewhere.length > 0 ? { elsewhere } : {}),
  };
}

function shardReport(index: number, count: number, checks: CheckReport[], durationMs = 1000): ShardReport {
  const report: RunReport = {
    apiVersion: "reconcile-conformance.dev/v1alpha1",
    kind: "Report",
    status: "passed",
    strict: false,
    startedAt: `2026-11-30T05:0${index}:00.000Z`,
    durationMs,
    contract: "/w/reconcile-conformance.yaml",
    cluster: { provider: "kind", name: `rc-${index}` },
    shard: { index, count },
    checks,
  };
  return { file: `shard-${index}/report.json`, report };
}

describe("mergeReports", () => {
  // The cluster sanity check runs in every shard; here shard 2 found it inconclusive.
  const sanity = (index: number) =>
    check("cluster/optimistic-concurrency", [
      scenario("ConfigMap stale replace", index === 2 ? "inconclusive" : "passed"),
    ]);

  it("joins the shards' scenarios into one verdict per check", () => {
    const merged = mergeReports([
      shardReport(1, 2, [sanity(1), check("drift/managed-field", [scenario("a", "passed")], ["b"])], 900),
      shardReport(2, 2, [sanity(2), check("drift/managed-field", [scenario("b", "failed")], ["a"])], 1200),
    ]);
    expect(merged.shard).toBeUndefined();
    const drift = merged.checks.find((c) => c.id === "drift/managed-field");
    expect(drift?.scenarios.map((s) => [s.target, s.status])).toEqual([
      ["a", "passed"],
      ["b", "failed"],
    ]);
    expect(drift?.status).toBe("failed");
    expect(drift?.elsewhere).toBeUndefined();
    // The scenario both shards ran appears once, with the more severe verdict.
    const cluster = merged.checks.find((c) => c.id === "cluster/optimistic-concurrency");
    expect(cluster?.scenarios.map((s) => s.status)).toEqual(["inconclusive"]);
    expect(merged.status).toBe("failed");
    expect(merged.durationMs).toBe(1200);
    expect(merged.startedAt).toBe("2026-11-30T05:01:00.000Z");
    // Each shard ran in a cluster of its own: the merged report names them all.
    expect(merged.cluster).toEqual({ provider: "kind", name: "rc-1, rc-2" });
  });

  it("links to the docs the shards linked to", () => {
    const docsBaseUrl = "https://github.com/o/kit/blob/v1";
    const [one, two] = [1, 2].map((i) => shardReport(i, 2, [sanity(i)], 100));
    const withDocs = (s: ShardReport): ShardReport => ({ ...s, report: { ...s.report, docsBaseUrl } });
    expect(mergeReports([withDocs(one!), withDocs(two!)]).docsBaseUrl).toBe(docsBaseUrl);
    expect(mergeReports([one!, two!])).not.toHaveProperty("docsBaseUrl");
  });

  it("names a target that a shard left to the others and none ran", () => {
    const merged = mergeReports([
      shardReport(1, 2, [check("idempotency/crash-after-write", [scenario("#1", "passed")], ["#9"])]),
      shardReport(2, 2, [check("idempotency/crash-after-write", [scenario("#2", "passed")], ["#1"])]),
    ]);
    const [crash] = merged.checks;
    expect(crash?.scenarios.find((s) => s.target === "#9")?.status).toBe("inconclusive");
    expect(crash?.scenarios.find((s) => s.target === "#9")?.message).toContain(
      "shard(s) 1/2 left this scenario to the others, and none ran it",
    );
    expect(merged.status).toBe("inconclusive");
  });

  it("refuses an incomplete or mixed set of shards, naming the file", () => {
    const one = shardReport(1, 3, [check("a/b", [scenario("x", "passed")])]);
    const two = shardReport(2, 3, [check("a/b", [scenario("y", "passed")])]);
    expect(() => mergeReports([one, two])).toThrow("shard(s) 3/3 missing");
    expect(() => mergeReports([one, { ...two, file: "dup.json", report: one.report }])).toThrow(
      "dup.json and shard-1/report.json are both shard 1/3",
    );
    const other = shardReport(2, 2, []);
    expect(() => mergeReports([one, other])).toThrow("shard-2/report.json: shard 2/2");
    const whole = { file: "whole.json", report: { ...one.report, shard: undefined } };
    expect(() => mergeReports([whole])).toThrow("whole.json: the report of a whole run");
    expect(() => mergeReports([])).toThrow(UsageError);
  });
});
