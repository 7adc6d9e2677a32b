import { mkdtemp, readFile } from "node:fs/promises";
import { availableParallelism, freemem, tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { loadContract, type Contract } from "../../src/contract/load-contract.js";
import { zxCommandRunner } from "../../src/process/command-runner.js";
import type { RunReport } from "../../src/report/report-model.js";
import { runKit } from "../../src/runner/run-kit.js";
import { SELECTABLE_SUITES } from "../../src/suites/suite-names.js";
import { systemClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";
import { pollUntil, PollTimeoutError } from "../../src/util/poll.js";
import { runExampleOperator, withMetricsSettle } from "./example-run.js";
import { startTestCluster, type TestCluster } from "./kwok-cluster.js";
import { exampleDir, exampleOperatorBinary } from "./webapp-example.js";

/**
 * The kill matrices of the example operators (each one's matrixFile):
 * for each mutant, the checks that must fail under `run --strict`, and the
 * reason for every other check it is allowed not to pass. Shared by the
 * test (test/matrix/kill-matrix.test.ts) and `npm run matrix`.
 */
export interface KillMatrix {
  /**
   * Correct operators in other styles than the reference's, each with why it
   * is correct: like the reference, every check must pass on them.
   */
  readonly variants?: Record<string, string>;
  readonly mutants: Record<string, MutantExpectation>;
}

export interface MutantExpectation {
  readonly mustFail: readonly string[];
  readonly alsoFails?: Readonly<Record<string, string>>;
  /**
   * Run beyond the sample's creation, as the contract's defaults do: spec
   * exploration on, and faults on the way to every update
   * (updateFaults). Only the reference, the variants and the mutants that
   * say so explore: the other mutants' kills rest on neither, and their
   * cases stay within the test command's time.
   */
  readonly explores?: boolean;
}

/** The matrix runs every suite (the registry's). */
export const MATRIX_SUITES: readonly string[] = SELECTABLE_SUITES;

/** How one case of an operator's matrix runs: `run --strict` of its contract, a mutant when `bug` is set. */
type CaseRunner = (
  cluster: TestCluster,
  options: {
    bug?: string;
    strict: boolean;
    suites: string[];
    checks?: string[];
    workDir?: string;
    metricsSettleMs?: number;
    /** False: spec exploration off (generatedUpdates: false) for this case. */
    explore: boolean;
  },
) => Promise<RunReport>;

/** An example operator with a kill matrix. */
export interface MatrixOperator {
  /**
   * The matrix's name, which names its cases ("webapp-operator-ts/reference"): its directory's
   * name under examples/, or, for a second matrix of one example, a name of its own.
   */
  readonly name: string;
  /** Its directory, holding its contract file (reconcile-conformance.yaml). */
  readonly dir: string;
  /** Its matrix file (for the first matrix of an example, kill-matrix.yaml in its directory). */
  readonly matrixFile: string;
  /** Makes ready what every case needs (builds the binary), once per matrix run. */
  readonly prepare: () => CaseRunner;
  /**
   * Fields its cases add to the contract file (the clock matrix's `clock`):
   * recorded with its observations, so that they are judged again under the
   * contract they ran with.
   */
  readonly contractFields?: Record<string, unknown>;
}

/**
 * The Go operator (controller-runtime): the contract's command is replaced by
 * the binary its build script made, built once before the first case.
 */
export const GO_OPERATOR: MatrixOperator = {
  name: "webapp-operator",
  dir: exampleDir,
  matrixFile: join(exampleDir, "kill-matrix.yaml"),
  prepare: () => {
    const binary = exampleOperatorBinary();
    return (cluster, { explore, ...options }) =>
      runExampleOperator(cluster, binary, { ...options, ...(explore ? {} : { contract: NO_EXPLORATION }) });
  },
};

/** The contract fields that turn spec exploration and the update paths' faults off, for a case that does not explore. */
const NO_EXPLORATION = { generatedUpdates: false, updateFaults: { lines: "none" } };

/**
 * The clock matrix's horizon: the clock-ticks variant's three ticks fall
 * within 15 s of the WebApp's creation (a tick at each multiple of 5 s of
 * Unix time after it), so every life waits 2 s beyond the last one.
 */
export const CLOCK_HORIZON = "17s";

/**
 * The Go operator again, time-driven: its "reference" is the clock-ticks
 * variant (bugs.go), its mutants the schedule's (ClockBugs), each run with
 * the contract's clock horizon (CLOCK_HORIZON), so every life waits for
 * every tick before its first convergence counts, and the ticks are
 * compared like any child (kill-matrix.clock.yaml).
 */
export const GO_CLOCK_OPERATOR: MatrixOperator = {
  name: "webapp-operator-clock",
  dir: exampleDir,
  matrixFile: join(exampleDir, "kill-matrix.clock.yaml"),
  prepare: () => {
    const binary = exampleOperatorBinary();
    return (cluster, { explore, ...options }) =>
      runExampleOperator(cluster, binary, {
        ...options,
        bug: options.bug ?? "clock-ticks",
        contract: { ...GO_CLOCK_OPERATOR.contractFields, ...(explore ? {} : NO_EXPLORATION) },
      });
  },
  contractFields: {
    // Its ticks' ConfigMaps are a record each: tick 1's create, amid the answer to the sample's
    // create in most lives, is then judged as a tick's too (idempotency/no-tick-overwrite).
    clock: { horizon: CLOCK_HORIZON, onePerTick: [{ kind: "ConfigMap", name: "hello-tick*" }] },
    // Its cases judge the clock: spec exploration and the faults on the way to each update are the
    // Go matrix's (clock-ticks passed both when they were added: every generated update, and every
    // update's crash lines in two rounds), and here each of their lives would wait out the horizon
    // (the reference took 401 s with the update faults, where it takes about 150 s without).
    generatedUpdates: false,
    updateFaults: { lines: "none" },
  },
};

const tsExampleDir = join(import.meta.dirname, "../../examples/webapp-operator-ts");

/**
 * The TypeScript operator (@kubernetes/client-node): its contract file as it
 * is (node from PATH runs src/main.ts), with WEBAPP_BUG set for a mutant and
 * emptied for the reference.
 */
export const TS_OPERATOR: MatrixOperator = {
  name: "webapp-operator-ts",
  dir: tsExampleDir,
  matrixFile: join(tsExampleDir, "kill-matrix.yaml"),
  prepare: () => (cluster, options) =>
    runContractFile(cluster, join(tsExampleDir, "reconcile-conformance.yaml"), options),
};

/**
 * Every operator with a matrix, in the order their cases are queued. The Go
 * matrix ends with generate-name on purpose (it leaves its cluster's garbage
 * collector minutes behind), so its cases come last, after the clock
 * matrix's.
 */
export const MATRIX_OPERATORS: readonly MatrixOperator[] = [TS_OPERATOR, GO_CLOCK_OPERATOR, GO_OPERATOR];

/**
 * The matrices the test command holds the kit to: every one, the clock
 * matrix with its horizon included (its lives wait 17 s each, so its cases
 * are the longest; they are queued before the Go matrix's).
 */
export const TESTED_MATRIX_OPERATORS: readonly MatrixOperator[] = MATRIX_OPERATORS;

/** The operator's kill matrix (its matrixFile). */
export async function loadKillMatrix(operator: MatrixOperator): Promise<KillMatrix> {
  return parse(await readFile(operator.matrixFile, "utf8")) as KillMatrix;
}

/** One case of a matrix: an operator's reference or one of its mutants. */
export interface MatrixCase {
  /** The operator's name (MatrixOperator.name). */
  readonly operator: string;
  /** "reference", or the variant's or the mutant's name. */
  readonly name: string;
  /** Whether it runs with spec exploration on (MutantExpectation.explores); absent: it does. */
  readonly explores?: boolean;
  /** Only these checks (`--check`); absent: every check of the matrix's suites. */
  readonly checks?: readonly string[];
}

/** The reference, every variant and every mutant of the operator's matrix, in the file's order. */
export function matrixCases(operator: MatrixOperator, matrix: KillMatrix): MatrixCase[] {
  return caseNames(matrix).map((name) => ({
    operator: operator.name,
    name,
    explores: matrix.mutants[name]?.explores ?? !(name in matrix.mutants),
  }));
}

/** "reference", the variants, the mutants. */
export function caseNames(matrix: KillMatrix): string[] {
  return ["reference", ...Object.keys(matrix.variants ?? {}), ...Object.keys(matrix.mutants)];
}

/**
 * The cases a filter selects (KILL_MATRIX_CASES): comma-separated patterns,
 * each "<operator>/<case>" ("*" stands for any run of characters) or an
 * operator's name alone (all its cases), e.g. "webapp-operator-ts" or
 * "webapp-operator/reference,webapp-operator/crash-gap" or
 * "webapp-operator/clock-ticks,webapp-operator-clock". Empty or absent:
 * every case. A pattern that selects nothing is an error, so a typo never
 * passes as an empty run.
 */
export function selectMatrixCases(
  cases: readonly MatrixCase[],
  filter: string | undefined,
  /** What the filter came from, for its error: the variable, or `npm run matrix`'s --only. */
  source = "KILL_MATRIX_CASES",
): MatrixCase[] {
  const patterns = (filter ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  if (patterns.length === 0) return [...cases];
  const matchers = patterns.map((pattern) => {
    const full = pattern.includes("/") ? pattern : `${pattern}/*`;
    const regex = new RegExp(`^${full.split("*").map(escapeRegex).join(".*")}$`);
    return { pattern, matches: (c: MatrixCase) => regex.test(`${c.operator}/${c.name}`) };
  });
  const unmatched = matchers.filter((m) => !cases.some(m.matches)).map((m) => m.pattern);
  if (unmatched.length > 0) {
    throw new Error(
      `${source}: ${unmatched.join(", ")} selects no case (cases: ${cases.map((c) => `${c.operator}/${c.name}`).join(", ")})`,
    );
  }
  return cases.filter((c) => matchers.some((m) => m.matches(c)));
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * "id=status: message" for every check that neither passed nor was skipped: the message of its
 * first scenario with the check's status (not of a skipped target, which says nothing of it).
 */
export function notPassed(report: RunReport): string[] {
  return report.checks
    .filter((c) => c.status !== "passed" && c.status !== "skipped")
    .map(
      (c) =>
        `${c.id}=${c.status}: ${(c.scenarios.find((s) => s.status === c.status) ?? c.scenarios.find((s) => s.status !== "passed"))?.message ?? ""}`,
    );
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
  /** The operator's name (MatrixOperator.name). */
  readonly operator: string;
  /** "reference" or the mutant's name. */
  readonly name: string;
  /** 0-based repeat. */
  readonly round: number;
  readonly report: RunReport;
  readonly durationMs: number;
  /** Which of the side-by-side clusters ran it (1-based). */
  readonly cluster: number;
  /** How long its cluster then took to clear the run's workloads, before the next case (untilScenarioWorkloadsCleared; 0 when no case was left). */
  readonly workloadsClearedMs: number;
}

/**
 * Runs cases of the matrices (`run --strict` on each operator's contract),
 * `repeat` times each, spread
 * over `parallel` kwok clusters of their own that run side by side: each
 * cluster takes the next case when it is free, so a slow mutant never holds
 * up the others. A cluster is started per worker and deleted at the end,
 * whatever happened. Each operator is prepared (its binary built) once,
 * before its first case.
 */
export async function runKillMatrix(options: {
  readonly cases: readonly MatrixCase[];
  readonly repeat?: number;
  readonly parallel: number;
  readonly suites?: readonly string[];
  /** Keep each run's scenario folders (logs, observation.json) under <workRoot>/<operator>/<case>/round-<n>. */
  readonly workRoot?: string;
  /** The settle after the work queues say done, in place of each contract's (for operators whose contract reads metrics). */
  readonly metricsSettleMs?: number;
  readonly onRun?: (run: MatrixRun) => void;
}): Promise<MatrixRun[]> {
  const { cases } = options;
  const runners = new Map<string, CaseRunner>();
  for (const name of new Set(cases.map((c) => c.operator))) {
    const operator = MATRIX_OPERATORS.find((o) => o.name === name);
    if (!operator) throw new Error(`no kill matrix for an operator named ${name}`);
    runners.set(name, operator.prepare());
  }
  const queue = Array.from({ length: options.repeat ?? 1 }, (_, round) =>
    cases.map((c) => ({ ...c, round })),
  ).flat();
  const runs: MatrixRun[] = [];
  const worker = async (cluster: number) => {
    const test = await startTestCluster(`rc-matrix-${cluster}`);
    try {
      for (let job = queue.shift(); job; job = queue.shift()) {
        const run = runners.get(job.operator);
        if (!run) throw new Error(`no runner for ${job.operator}`);
        const started = Date.now();
        const report = await run(test, {
          ...(job.name === "reference" ? {} : { bug: job.name }),
          strict: true,
          suites: [...(options.suites ?? MATRIX_SUITES)],
          ...(job.checks ? { checks: [...job.checks] } : {}),
          ...(options.workRoot
            ? { workDir: join(options.workRoot, job.operator, job.name, `round-${job.round + 1}`) }
            : {}),
          ...(options.metricsSettleMs === undefined ? {} : { metricsSettleMs: options.metricsSettleMs }),
          explore: job.explores ?? true,
        });
        const ran = Date.now();
        // A cluster with no case left to run has nothing to clear for.
        if (queue.length > 0) await untilScenarioWorkloadsCleared(test);
        const matrixRun = {
          ...job,
          report,
          durationMs: ran - started,
          cluster,
          workloadsClearedMs: Date.now() - ran,
        };
        runs.push(matrixRun);
        options.onRun?.(matrixRun);
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
 * Waits until the scenario namespaces of the run before hold no more
 * Deployments than a run of a correct operator leaves (one per scenario's
 * namespace: its sample's), then until the garbage collector answers: a run does not wait for its namespaces'
 * deletion, and a mutant that leaves hundreds of Deployments
 * (generate-name) would otherwise hand the next case on the cluster a
 * controller-manager too busy to make its Pods available within the
 * convergence timeout. Not until the namespaces are gone: the namespace
 * controller deletes a namespace's Pods first and everything else on a
 * later pass, about 11 s after the delete on a quiet kwok cluster, and
 * that wait, after every case, was a third of the matrix's time. Both
 * example operators watch only their scenario's namespace, so a
 * terminating one is nothing to the next case. Gives up quietly after
 * four minutes (the next case then shows the load).
 */
async function untilScenarioWorkloadsCleared(test: TestCluster): Promise<void> {
  const isScenarioNamespace = (name: string | undefined) => name?.startsWith("rc-") === true;
  await pollUntil(
    async () => {
      const namespaces = (await test.client.list("v1", "Namespace")).filter((n) =>
        isScenarioNamespace(n.metadata?.name),
      ).length;
      const deployments = (await test.client.list("apps/v1", "Deployment")).filter((d) =>
        isScenarioNamespace(d.metadata?.namespace),
      ).length;
      return deployments <= namespaces
        ? { done: true, value: undefined }
        : { done: false, reason: `${deployments} Deployment(s) left in ${namespaces} namespace(s)` };
    },
    { description: "the run's scenario workloads to be cleared", timeoutMs: 240_000, intervalMs: 500 },
  ).catch((error: unknown) => {
    if (!(error instanceof PollTimeoutError)) throw error;
  });
  await untilGarbageCollectorAnswers(test);
}

/**
 * Waits until the garbage collector removes a dependent of a deleted owner:
 * a probe through its own queue. A mutant's hundreds of Deployments leave
 * it a backlog (their ReplicaSets, their Pods, each checked against the API
 * at the controller-manager's request rate) that outlives the Deployments:
 * recreate-same-name, next on that cluster after generate-name, then waited
 * for its own collection past its timeout. Under a second on a quiet
 * cluster; gives up quietly after four minutes.
 */
async function untilGarbageCollectorAnswers(test: TestCluster): Promise<void> {
  const name = `matrix-gc-probe-${Date.now().toString(36)}`;
  const ref = { apiVersion: "v1", kind: "ConfigMap", namespace: "default" } as const;
  const owner = await test.client.create({ ...ref, metadata: { name, namespace: "default" } });
  const uid = owner.metadata?.uid ?? "";
  await test.client.create({
    ...ref,
    metadata: {
      name: `${name}-dependent`,
      namespace: "default",
      ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name, uid }],
    },
  });
  await test.client.delete({ ...ref, name }, { propagationPolicy: "Background" });
  await pollUntil(
    async () =>
      (await test.client.tryGet({ ...ref, name: `${name}-dependent` }))
        ? { done: false, reason: "the probe's dependent is still there" }
        : { done: true, value: undefined },
    { description: "the garbage collector to collect a probe", timeoutMs: 240_000, intervalMs: 200 },
  ).catch(async (error: unknown) => {
    if (!(error instanceof PollTimeoutError)) throw error;
    await test.client.delete({ ...ref, name: `${name}-dependent` }).catch(() => undefined);
  });
}

/**
 * runKit on a contract file as it is, against a test cluster as the
 * `existing` provider, with WEBAPP_BUG set to `bug` (emptied for the
 * reference, whatever the environment says).
 */
async function runContractFile(
  cluster: TestCluster,
  file: string,
  options: Parameters<CaseRunner>[1],
): Promise<RunReport> {
  const written = await loadContract(file);
  // A settle applies where the contract reads the operator's metrics (the TypeScript example's does not).
  const readsMetrics = written.operator.mode === "process" && written.operator.metrics !== undefined;
  const contract =
    options.metricsSettleMs !== undefined && readsMetrics
      ? withMetricsSettle(written, options.metricsSettleMs)
      : written;
  const operator = { ...contract.operator, env: { ...contract.operator.env, WEBAPP_BUG: options.bug ?? "" } };
  const { exploration: _exploration, ...withoutGenerated } = contract;
  const withoutExploration: Contract = {
    ...withoutGenerated,
    updateFaults: { ...contract.updateFaults, lines: "none" },
  };
  return runKit(
    {
      contract: { ...(options.explore ? contract : withoutExploration), operator },
      cluster: {
        provider: "existing",
        kubeconfigPath: cluster.access.kubeconfigPath,
        context: cluster.access.context,
      },
      suites: options.suites,
      ...(options.checks ? { checks: options.checks } : {}),
      strict: options.strict,
      keep: false,
      workDir: options.workDir ?? join(await mkdtemp(join(tmpdir(), "rc-matrix-run-")), "work"),
    },
    {
      runner: zxCommandRunner,
      logger: silentLogger,
      signal: new AbortController().signal,
      clock: systemClock,
      progress: {
        phase: () => undefined,
        checkStarted: () => undefined,
        step: () => undefined,
        checkFinished: () => undefined,
      },
    },
  );
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
