import { beforeAll, describe, expect, it } from "vitest";
import {
  defaultMatrixParallelism,
  loadKillMatrix,
  matrixViolations,
  notPassed,
  runKillMatrix,
  type MatrixRun,
} from "../support/kill-matrix.js";

// The kill matrix: `run --strict` on the reference (every check passes) and on
// each mutant listed in examples/webapp-operator/kill-matrix.yaml, which must
// fail the checks listed there and nothing else unless the file says why.
// The cases run side by side on kwok clusters of their own (one per core,
// memory allowing); each test below judges one case's report.

const matrix = await loadKillMatrix();
const cases = ["reference", ...Object.keys(matrix.mutants)];
const runs = new Map<string, MatrixRun>();

beforeAll(async () => {
  for (const run of await runKillMatrix({ cases, parallel: defaultMatrixParallelism() })) {
    runs.set(run.name, run);
  }
}, 2_400_000);

const reportOf = (name: string) => {
  const run = runs.get(name);
  if (!run) throw new Error(`the matrix produced no report for ${name}`);
  return run.report;
};

describe("kill matrix of the example operator (run --strict)", () => {
  it("the reference passes every check", () => {
    const report = reportOf("reference");
    expect(notPassed(report)).toEqual([]);
    expect(report.checks.map((c) => c.id)).toEqual([
      "cluster/optimistic-concurrency",
      "drift/managed-field",
      "drift/deleted-child",
      "status-stability/no-avoidable-writes",
      "status-stability/no-redundant-writes",
      "status-stability/last-transition-time",
      "status-stability/observed-generation",
      "idempotency/crash-after-create",
      "idempotency/crash-after-write",
      "idempotency/preexisting-child",
      "idempotency/recreate-same-name",
      "conflict/child-update",
      "conflict/status-update",
      "staleness/own-create-unseen",
      "staleness/missed-intermediate-state",
      "staleness/restart-from-the-past",
    ]);
  });

  it.each(Object.entries(matrix.mutants))(
    "%s fails what it must, and nothing unexplained",
    (bug, expected) => {
      expect(matrixViolations(reportOf(bug), expected)).toEqual([]);
    },
  );
});
