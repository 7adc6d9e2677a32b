import { beforeAll, describe, expect, it } from "vitest";
import { KNOWN_CHECKS } from "../../src/suites/index.js";
import {
  defaultMatrixParallelism,
  loadKillMatrix,
  TESTED_MATRIX_OPERATORS,
  matrixCases,
  matrixViolations,
  notPassed,
  runKillMatrix,
  selectMatrixCases,
  type MatrixRun,
} from "../support/kill-matrix.js";

// The kill matrices of the example operators: `run --strict` on each one's
// reference and each variant listed in its matrix file (every check
// passes), and on each mutant listed there (examples/webapp-operator, the Go
// operator on controller-runtime; examples/webapp-operator-ts, the
// TypeScript one on @kubernetes/client-node; webapp-operator-clock, the Go
// operator's clock-ticks variant and its mutants with a clock horizon, in
// examples/webapp-operator/kill-matrix.clock.yaml), which must fail the checks listed there and
// nothing else unless the file says why. The cases of both run side by side
// on kwok clusters of their own (one per core, memory allowing); each test
// below judges one case's report. KILL_MATRIX_CASES restricts the run to some
// cases ("webapp-operator-ts", "webapp-operator/reference,webapp-operator/crash-gap";
// see selectMatrixCases); the others are skipped.
//
// Here each mutant runs only the checks it must fail (its row's mustFail): that
// it is caught where the matrix says. Its alsoFails are outcomes it is allowed,
// not ones it must give, so running them here could assert nothing, and they
// are the slow ones (a mutant that never converges waits out every timeout).
// The reference and the variants run every check, since a false alarm on a
// correct operator is what the matrix exists to rule out. That a mutant fails
// nothing its row does not explain is the full matrix's to show (`npm run
// matrix`, every check on every case; CONTRIBUTING.md says when to run it), or
// this file with KILL_MATRIX_EVERY_CHECK=1.

const matrices = await Promise.all(
  TESTED_MATRIX_OPERATORS.map(async (operator) => ({ operator, matrix: await loadKillMatrix(operator) })),
);
const everyCheck = process.env.KILL_MATRIX_EVERY_CHECK === "1";
// A mutant no check catches yet (an empty mustFail: a gap its matrix file states) is the full
// matrix's to run; here it would assert nothing about what the kit catches.
const uncaught = (name: string, matrix: (typeof matrices)[number]["matrix"]) =>
  !everyCheck && matrix.mutants[name]?.mustFail.length === 0;
const selected = selectMatrixCases(
  matrices.flatMap(({ operator, matrix }) =>
    matrixCases(operator, matrix)
      .filter((c) => !uncaught(c.name, matrix))
      .map((c) => {
        const row = matrix.mutants[c.name];
        return row && !everyCheck ? { ...c, checks: row.mustFail } : c;
      }),
  ),
  process.env.KILL_MATRIX_CASES,
);
const caseId = (operator: string, name: string) => `${operator}/${name}`;
const isSelected = (operator: string, name: string) =>
  selected.some((c) => c.operator === operator && c.name === name);
const runs = new Map<string, MatrixRun>();

beforeAll(async () => {
  const started = Date.now();
  const matrixRuns = await runKillMatrix({
    cases: selected,
    parallel: defaultMatrixParallelism(),
    onRun: (run) => {
      const expected =
        run.name === "reference"
          ? undefined
          : matrices.find((m) => m.operator.name === run.operator)?.matrix.mutants[run.name];
      const violations = matrixViolations(run.report, expected).length;
      console.log(
        `kill matrix: ${caseId(run.operator, run.name)} in ${(run.durationMs / 1000).toFixed(0)} s on cluster ${run.cluster} (its workloads cleared ${(run.workloadsClearedMs / 1000).toFixed(0)} s later): ${violations === 0 ? "as the matrix says" : `${violations} violation(s)`}`,
      );
    },
  });
  for (const run of matrixRuns) runs.set(caseId(run.operator, run.name), run);
  console.log(`kill matrix: ${matrixRuns.length} case(s) in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}, 3_000_000);

const reportOf = (operator: string, name: string) => {
  const run = runs.get(caseId(operator, name));
  if (!run) throw new Error(`the matrix produced no report for ${caseId(operator, name)}`);
  return run.report;
};

for (const { operator, matrix } of matrices) {
  describe(`kill matrix of ${operator.name} (run --strict)`, () => {
    const test = (name: string) => (isSelected(operator.name, name) ? it : it.skip);

    test("reference")("the reference passes every check", () => {
      const report = reportOf(operator.name, "reference");
      expect(notPassed(report)).toEqual([]);
      expect(report.checks.map((c) => c.id)).toEqual(KNOWN_CHECKS.map((c) => c.id));
    });

    for (const [variant, why] of Object.entries(matrix.variants ?? {})) {
      test(variant)(`the ${variant} variant (${why}) passes every check, as the reference does`, () => {
        expect(notPassed(reportOf(operator.name, variant))).toEqual([]);
      });
    }

    for (const [bug, expected] of Object.entries(matrix.mutants).filter(([bug]) => !uncaught(bug, matrix))) {
      const scope = everyCheck ? "" : " (on the checks it must fail)";
      test(bug)(`${bug} fails what it must, and nothing unexplained${scope}`, () => {
        const report = reportOf(operator.name, bug);
        expect(matrixViolations(report, expected)).toEqual([]);
        if (!everyCheck) {
          expect(report.checks.map((c) => c.id).sort()).toEqual([...expected.mustFail].sort());
        }
      });
    }
  });
}
