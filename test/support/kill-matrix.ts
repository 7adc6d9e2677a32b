import { readFile } from "node:fs/promises";
import { availableParallelism, freemem } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import type { RunReport } from "../../src/report/report-model.js";
import { runExampleOperator } from "./example-run.js";
import { startTestCluster } from "./kwok-cluster.js";
import { exampleDir, exampleOperatorBinary } from "./webapp-example.js";

/**
 * The kill matrix of the example operator (examples/webapp-operator/kill-matrix.yaml):
 * for each mutant, the checks that must fail under `run --strict`, and the
 * reason for every other check it is allowed not to pass. Shared by the
 * test (test/cluster/kill-matrix.test.ts) and `npm run matrix`.
 */
export interface KillMatrix {
  readonly mutants: Record<string, MutantExpectation>;
}

export interface MutantExpectation {
  readonly mustFail: readonly string[];
  readonly alsoFails?: Readonly<Record<string, string>>;
}

/** The suites the kit implements so far: what the matrix runs. */
export const MATRIX_SUITES = ["drift", "status-stability", "idempotency", "conflict", "staleness"];

export async function loadKillMatrix(): Promise<KillMatrix> {
  return parse(await readFile(join(exampleDir, "kill-matrix.yaml"), "utf8")) as KillMatrix;
}

/** "id=status: first message" for every check that neither passed nor was skipped. */
export function notPassed(report: RunReport): string[] {
  return report.checks
    .filter((c) => c.status !== "passed" && c.status !== "skipped")
    .map((c) => `${c.id}=${c.status}: ${c.scenarios.find((s) => s.status !== "passed")?.message ?? ""}`);
}

/**
 * What is wrong with a run against its row of the matrix (the reference:
 * no expectation, so every check must pass): must-fail checks that did not
 * fail, and checks that did not pass without a written reason.
 */
export function matrixViolations(report: RunReport, expected: MutantExpectation | undefined): string[] {
  const status = Object.fromEntries(report.checks.map((c) => [c.id, c.status]));
  const missed = (expected?.mustFail ?? [])
    .filter((id) => status[id] !== "failed")
    .map((id) => {
      const check = report.checks.find((c) => c.id === id);
      return `${id}=${status[id] ?? "absent"} but must fail: ${check?.scenarios[0]?.message ?? ""}`;
    });
  const unexplained = notPassed(report).filter((line) => {
    const id = line.split("=")[0] ?? "";
    return !(expected?.mustFail ?? []).includes(id) && !(id in (expected?.alsoFails ?? {}));
  });
  return [...missed, ...unexplained];
}

/** One run of one case of the matrix. */
export interface MatrixRun {
  /** "reference" or the mutant's name. */
  readonly name: string;
  /** 0-based repeat. */
  readonly round: number;
  readonly report: RunReport;
  readonly durationMs: number;
  /** Which of the side-by-side clusters ran it (1-based). */
  readonly cluster: number;
}

/**
 * Runs cases of the matrix (`run --strict` on the example operator's
 * built binary), `repeat` times each, spread over `parallel` kwok clusters
 * of their own that run side by side: each cluster takes the next case
 * when it is free, so a slow mutant never holds up the others. A cluster
 * is started per worker and deleted at the end, whatever happened.
 */
export async function runKillMatrix(options: {
  readonly cases: readonly string[];
  readonly repeat?: number;
  readonly parallel: number;
  readonly suites?: readonly string[];
  readonly onRun?: (run: MatrixRun) => void;
}): Promise<MatrixRun[]> {
  const binary = exampleOperatorBinary();
  const queue = Array.from({ length: options.repeat ?? 1 }, (_, round) =>
    options.cases.map((name) => ({ name, round })),
  ).flat();
  const runs: MatrixRun[] = [];
  const worker = async (cluster: number) => {
    const test = await startTestCluster(`rc-matrix-${cluster}`);
    try {
      for (let job = queue.shift(); job; job = queue.shift()) {
        const started = Date.now();
        const report = await runExampleOperator(test, binary, {
          ...(job.name === "reference" ? {} : { bug: job.name }),
          strict: true,
          suites: [...(options.suites ?? MATRIX_SUITES)],
        });
        const run = { ...job, report, durationMs: Date.now() - started, cluster };
        runs.push(run);
        options.onRun?.(run);
      }
    } finally {
      test.client.close();
      await test.provider.delete();
    }
  };
  const workers = Math.max(1, Math.min(options.parallel, queue.length));
  await Promise.all(Array.from({ length: workers }, (_, i) => worker(i + 1)));
  return runs;
}

/**
 * How many clusters side by side by default: one per core (the API servers
 * and operators are CPU-bound), at most one per free GiB (a kwok cluster
 * with its operator takes about 0.5), overridable with
 * RECONCILE_CONFORMANCE_MATRIX_PARALLEL.
 */
export function defaultMatrixParallelism(): number {
  const override = process.env.RECONCILE_CONFORMANCE_MATRIX_PARALLEL;
  if (override) {
    const value = Number(override);
    if (!Number.isInteger(value) || value < 1) {
      throw new Error(`RECONCILE_CONFORMANCE_MATRIX_PARALLEL=${override}: expected a whole number >= 1`);
    }
    return value;
  }
  return Math.max(1, Math.min(availableParallelism(), Math.floor(freemem() / 2 ** 30)));
}
