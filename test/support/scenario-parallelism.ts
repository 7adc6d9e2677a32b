import { expect } from "vitest";
import type { RunReport } from "../../src/report/report-model.js";
import { runExampleOperator } from "./example-run.js";
import { MATRIX_SUITES } from "./kill-matrix.js";
import type { TestCluster } from "./kwok-cluster.js";

// Scenarios side by side (run --parallel, a namespaced operator: one process
// per scenario, each confined to its scenario's namespace) must give exactly
// the verdicts of the same scenarios run one at a time. Two test files run it
// (scenario-parallelism-*.test.ts), the reference in one and a mutant that
// fails checks of several suites in the other, so that the test command's two
// workers can run them side by side: the one-at-a-time runs are long.

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

/** Runs the example operator (a mutant when `bug` is set) both ways and asserts the same verdicts. */
export async function expectSideBySideAsOneAtATime(
  cluster: TestCluster,
  binary: string,
  bug: string | undefined,
): Promise<void> {
  // Without spec exploration and the update paths' faults: their scenarios are scenarios like any
  // other here, and one at a time they would double the test's longest run (the kill matrix runs
  // them on the reference, side by side).
  const contract = { generatedUpdates: false, updateFaults: { lines: "none" } };
  const options = { ...(bug ? { bug } : {}), strict: true, suites: [...MATRIX_SUITES], contract };
  const oneByOne = await runExampleOperator(cluster, binary, { ...options, parallel: 1 });
  const sideBySide = await runExampleOperator(cluster, binary, { ...options, parallel: 4 });
  expect(verdicts(sideBySide)).toEqual(verdicts(oneByOne));
  // Not vacuous: the runs judged something, and the parallel one really overlapped its scenarios.
  expect(oneByOne.checks.length).toBe(22);
  expect(driftWallMs(oneByOne)).toBeGreaterThanOrEqual(driftScenarioMs(oneByOne) * 0.95);
  expect(driftWallMs(sideBySide)).toBeLessThan(driftScenarioMs(sideBySide) * 0.6);
}
