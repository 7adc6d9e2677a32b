import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mergeReports } from "../../src/report/merge-reports.js";
import type { RunReport } from "../../src/report/report-model.js";
import { runExampleOperator } from "../support/example-run.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import { exampleOperatorBinary } from "../support/webapp-example.js";

// A run split in two shards (as two jobs of a workflow matrix would) and merged gives the whole
// run's scenarios and verdicts: each scenario run by exactly one shard, nothing lost.
let cluster: TestCluster;
let whole: RunReport;
let shards: RunReport[];

const targets = (report: RunReport, check: string) =>
  report.checks
    .find((c) => c.id === check)
    ?.scenarios.map((s) => s.target)
    .sort() ?? [];

beforeAll(async () => {
  cluster = await startTestCluster("shard");
  const binary = exampleOperatorBinary();
  const options = { strict: true, suites: ["drift"] };
  whole = await runExampleOperator(cluster, binary, options);
  shards = [];
  for (const index of [1, 2]) {
    shards.push(await runExampleOperator(cluster, binary, { ...options, shard: { index, count: 2 } }));
  }
}, 600_000);

afterAll(async () => {
  cluster?.client.close();
  await cluster?.provider.delete();
});

describe("run --shard i/n and merge", () => {
  it("gives every drift scenario to exactly one shard, and lists the others' as elsewhere", () => {
    for (const check of ["drift/managed-field", "drift/deleted-child"]) {
      const all = targets(whole, check);
      expect(all.length).toBeGreaterThan(1);
      const [one, two] = shards.map((s) => targets(s, check));
      expect([...(one ?? []), ...(two ?? [])].sort()).toEqual(all);
      expect((one ?? []).filter((t) => two?.includes(t))).toEqual([]);
      const elsewhere = shards.map((s) =>
        [...(s.checks.find((c) => c.id === check)?.elsewhere ?? [])].sort(),
      );
      expect(elsewhere[0]).toEqual(two);
      expect(elsewhere[1]).toEqual(one);
    }
    // The sanity check is every shard's, and each shard's report stands alone.
    for (const shard of shards) {
      expect(targets(shard, "cluster/optimistic-concurrency")).toEqual(["ConfigMap stale replace"]);
      expect(shard.status).toBe("passed");
    }
    expect(shards.map((s) => s.shard)).toEqual([
      { index: 1, count: 2 },
      { index: 2, count: 2 },
    ]);
  });

  it("merges into the whole run's scenarios and verdicts", () => {
    const merged = mergeReports(shards.map((report, i) => ({ file: `shard-${i + 1}.json`, report })));
    expect(merged.status).toBe(whole.status);
    const verdicts = (report: RunReport) =>
      report.checks.map((c) => ({
        id: c.id,
        status: c.status,
        scenarios: c.scenarios.map((s) => `${s.target}: ${s.status}`).sort(),
      }));
    expect(verdicts(merged)).toEqual(verdicts(whole));
  });
});
