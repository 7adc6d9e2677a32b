import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/report/report-model.js";
import { runExampleOperator } from "../support/example-run.js";
import { MATRIX_SUITES } from "../support/kill-matrix.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import { exampleOperatorBinary } from "../support/webapp-example.js";

// Scenarios side by side (run --parallel, a namespaced operator: one process
// per scenario, each confined to its scenario's namespace) must give exactly
// the verdicts of the same scenarios run one at a time. Both ways, on the
// reference and on a mutant that fails checks of several suites.

let cluster: TestCluster;
let binary: string;

beforeAll(async () => {
  binary = exampleOperatorBinary();
  cluster = await startTestCluster("rc-parallel");
});

afterAll(async () => {
  cluster?.client.close();
  await cluster?.provider.delete();
});

/** Every verdict of a report: check -> status, and each scenario's target -> status. */
function verdicts(report: RunReport) {
  return Object.fromEntries(
    report.checks.map((c) => [
      c.id,
      { status: c.status, scenarios: c.scenarios.map((s) => `${s.target}: ${s.status}`) },
    ]),
  );
}

/** The summed durations of the drift suite's scenarios (each has a namespace and an operator of its own). */
const driftScenarioMs = (report: RunReport) =>
  report.checks
    .filter((c) => c.id.startsWith("drift/"))
    .flatMap((c) => c.scenarios)
    .reduce((sum, s) => sum + s.durationMs, 0);
const driftWallMs = (report: RunReport) =>
  Math.max(...report.checks.filter((c) => c.id.startsWith("drift/")).map((c) => c.durationMs));

describe("scenarios side by side give the verdicts of scenarios one at a time", () => {
  it.each([
    ["the reference", undefined],
    ["the crash-gap mutant", "crash-gap"],
  ])("%s", { timeout: 600_000 }, async (_name, bug) => {
    const options = { ...(bug ? { bug } : {}), strict: true, suites: [...MATRIX_SUITES] };
    const oneByOne = await runExampleOperator(cluster, binary, { ...options, parallel: 1 });
    const sideBySide = await runExampleOperator(cluster, binary, { ...options, parallel: 4 });
    expect(verdicts(sideBySide)).toEqual(verdicts(oneByOne));
    // Not vacuous: the runs judged something, and the parallel one really overlapped its scenarios.
    expect(oneByOne.checks.length).toBe(21);
    expect(driftWallMs(oneByOne)).toBeGreaterThanOrEqual(driftScenarioMs(oneByOne) * 0.95);
    expect(driftWallMs(sideBySide)).toBeLessThan(driftScenarioMs(sideBySide) * 0.6);
  });
});
