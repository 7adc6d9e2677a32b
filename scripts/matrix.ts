// npm run matrix -- [--operator webapp-operator|webapp-operator-ts|webapp-operator-clock] [--repeat N]
//                   [--parallel P] [--only a,b] [--suites a,b] [--verdicts FILE] [--work-dir DIR]
//                   [--settle 100ms]
//
// Runs an example operator's kill matrix (the reference, every variant and every mutant in its
// matrix file, examples/<operator>/kill-matrix.yaml or, for the clock matrix,
// examples/webapp-operator/kill-matrix.clock.yaml; `run --strict`; default the Go one) N times, the
// cases spread over P kwok clusters side by side, and reports each case's
// violations of the matrix and every check whose verdict differed between
// rounds (a flake). Exit 1 when anything violated the matrix or flaked.
// --only selects cases as KILL_MATRIX_CASES does, from every matrix: "<operator>/<case>" ("*" for
// any run of characters) or an operator's name (all its cases); a case's name alone is --operator's
// (--only reference,crash-gap), e.g. --only webapp-operator/clock-ticks,webapp-operator-clock.
// --verdicts writes every scenario's verdict (case, round, check, target, status), sorted, as
// JSON: two commits' files compared show which verdicts a change moved. --work-dir keeps every
// scenario's folder (its logs and observation.json) under DIR/<operator>/<case>/round-<n>.
// --settle replaces the settle after the work queues say done, where a contract reads the
// operator's metrics (the Go example's): how short it can be while the verdicts stay.
import { writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { durationMs } from "../src/contract/contract-schema.js";
import type { Status } from "../src/report/report-model.js";
import {
  defaultMatrixParallelism,
  GO_OPERATOR,
  loadKillMatrix,
  MATRIX_OPERATORS,
  MATRIX_SUITES,
  matrixCases,
  matrixViolations,
  runKillMatrix,
  selectMatrixCases,
} from "../test/support/kill-matrix.js";

const { values } = parseArgs({
  options: {
    operator: { type: "string", default: GO_OPERATOR.name },
    repeat: { type: "string", default: "1" },
    parallel: { type: "string" },
    only: { type: "string" },
    suites: { type: "string" },
    verdicts: { type: "string" },
    "work-dir": { type: "string" },
    settle: { type: "string" },
  },
});
const wholeNumber = (flag: string, value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${flag} ${value}: expected a whole number >= 1`);
  return n;
};
const settleArgument = (value: string) => {
  try {
    return durationMs(value);
  } catch {
    throw new Error(`--settle ${value}: expected a duration such as 100ms`);
  }
};
const repeat = wholeNumber("repeat", values.repeat);
const parallel = values.parallel ? wholeNumber("parallel", values.parallel) : defaultMatrixParallelism();
const suites = values.suites ? values.suites.split(",") : MATRIX_SUITES;
// How short the settle after the queues say done can be while the verdicts stay (issue 27's measure).
const metricsSettleMs = values.settle === undefined ? undefined : settleArgument(values.settle);

const operator = MATRIX_OPERATORS.find((candidate) => candidate.name === values.operator);
if (!operator) {
  throw new Error(
    `--operator ${values.operator}: not an example with a kill matrix (${MATRIX_OPERATORS.map((o) => o.name).join(", ")})`,
  );
}
const matrices = new Map(
  await Promise.all(MATRIX_OPERATORS.map(async (o) => [o.name, await loadKillMatrix(o)] as const)),
);
const expectationOf = (run: { readonly operator: string; readonly name: string }) =>
  matrices.get(run.operator)?.mutants[run.name];
// --only: patterns over every matrix's cases; a case's name alone is --operator's.
const only = values.only
  ?.split(",")
  .map((p) => p.trim())
  .filter(Boolean)
  .map((p) => (p.includes("/") || MATRIX_OPERATORS.some((o) => o.name === p) ? p : `${operator.name}/${p}`));
const cases =
  only && only.length > 0
    ? selectMatrixCases(
        MATRIX_OPERATORS.flatMap((o) => matrixCases(o, matrices.get(o.name) ?? { mutants: {} })),
        only.join(","),
        "--only",
      )
    : matrixCases(operator, matrices.get(operator.name) ?? { mutants: {} });
const caseId = (c: { readonly operator: string; readonly name: string }) => `${c.operator}/${c.name}`;

console.log(
  `kill matrix: ${cases.length} case(s) x ${repeat} round(s) on ${parallel} cluster(s) side by side; suites ${suites.join(", ")}${metricsSettleMs === undefined ? "" : `; settle ${metricsSettleMs} ms where the contract reads metrics`}`,
);
const started = Date.now();
const violations: string[] = [];
const runs = await runKillMatrix({
  cases,
  repeat,
  parallel,
  suites,
  ...(values["work-dir"] ? { workRoot: values["work-dir"] } : {}),
  ...(metricsSettleMs === undefined ? {} : { metricsSettleMs }),
  onRun: (run) => {
    const wrong = matrixViolations(run.report, expectationOf(run));
    violations.push(...wrong.map((w) => `${caseId(run)} (round ${run.round + 1}): ${w}`));
    console.log(
      `${caseId(run)} round ${run.round + 1}: ${wrong.length === 0 ? "as the matrix says" : `${wrong.length} violation(s)`} in ${(run.durationMs / 1000).toFixed(0)} s (cluster ${run.cluster})`,
    );
    for (const w of wrong) console.log(`  ${w}`);
  },
});

// case -> check -> verdict per round
const verdicts = new Map<string, Map<string, Status[]>>();
for (const run of [...runs].sort((a, b) => a.round - b.round)) {
  const checks = verdicts.get(caseId(run)) ?? new Map<string, Status[]>();
  verdicts.set(caseId(run), checks);
  for (const c of run.report.checks) checks.set(c.id, [...(checks.get(c.id) ?? []), c.status]);
}
const flakes = [...verdicts].flatMap(([name, checks]) =>
  [...checks]
    .filter(([, statuses]) => new Set(statuses).size > 1)
    .map(([check, statuses]) => `${name}: ${check} was ${statuses.join(", ")}`),
);
if (values.verdicts) {
  const rows = runs.flatMap((run) =>
    run.report.checks.flatMap((c) =>
      c.scenarios.map((s) => ({
        case: caseId(run),
        round: run.round + 1,
        check: c.id,
        target: s.target,
        status: s.status,
      })),
    ),
  );
  const key = (r: (typeof rows)[number]) => `${r.case} ${r.round} ${r.check} ${r.target}`;
  rows.sort((a, b) => key(a).localeCompare(key(b)));
  await writeFile(values.verdicts, `${JSON.stringify(rows, null, 1)}\n`);
  console.log(`verdicts of ${rows.length} scenario(s) in ${values.verdicts}`);
}
console.log(`\n${runs.length} run(s) in ${((Date.now() - started) / 1000).toFixed(0)} s`);
if (repeat > 1) {
  console.log(
    flakes.length === 0 ? "no verdict differed between rounds" : `flakes:\n  ${flakes.join("\n  ")}`,
  );
}
console.log(
  violations.length === 0
    ? "every case as the matrix says"
    : `matrix violations:\n  ${violations.join("\n  ")}`,
);
process.exitCode = violations.length > 0 || flakes.length > 0 ? 1 : 0;
