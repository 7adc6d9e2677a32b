import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parse, stringify } from "yaml";
import { loadContract, type Contract } from "../../src/contract/load-contract.js";
import { zxCommandRunner } from "../../src/process/command-runner.js";
import type { RunReport } from "../../src/report/report-model.js";
import { runKit, type ProgressReporter } from "../../src/runner/run-kit.js";
import type { Shard } from "../../src/runner/shard.js";
import { systemClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";
import type { TestCluster } from "./kwok-cluster.js";
import { exampleDir } from "./webapp-example.js";

const quiet: ProgressReporter = {
  phase: () => undefined,
  checkStarted: () => undefined,
  step: () => undefined,
  checkFinished: () => undefined,
};

/**
 * The example operator's contract with absolute paths and its built binary
 * (a mutant when `bug` is set, more fields when `extra` is), in a directory
 * of its own; returns the file.
 */
export async function writeExampleContract(
  binary: string,
  options: { bug?: string; extra?: Record<string, unknown> } = {},
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "rc-example-run-"));
  const contract = parse(await readFile(join(exampleDir, "reconcile-conformance.yaml"), "utf8")) as Record<
    string,
    unknown
  >;
  const file = join(dir, "reconcile-conformance.yaml");
  await writeFile(
    file,
    stringify({
      ...contract,
      operator: {
        ...(contract.operator as object),
        command: [binary, "--leader-elect=false"],
        env: options.bug ? { WEBAPP_BUG: options.bug } : {},
      },
      crds: [join(exampleDir, "crds/webapp.yaml")],
      sample: join(exampleDir, "samples/webapp.yaml"),
      ...options.extra,
    }),
  );
  return file;
}

/**
 * runKit on the example operator's contract (its built binary, absolute
 * paths; a mutant when `bug` is set) against a test cluster, as the
 * `existing` provider.
 */
export async function runExampleOperator(
  cluster: TestCluster,
  binary: string,
  options: {
    bug?: string;
    strict: boolean;
    suites: string[];
    /** Only these checks (--check). */
    checks?: string[];
    parallel?: number;
    shard?: Shard;
    /** More contract fields (promises, waivers). */
    contract?: Record<string, unknown>;
    /** Only this scenario (--scenario). */
    scenario?: string;
    /** Where the scenarios' logs and observations go (default: beside the contract, in a temporary directory). */
    workDir?: string;
    /** The settle after the work queues say done, in place of the contract's (npm run matrix --settle). */
    metricsSettleMs?: number;
  },
): Promise<RunReport> {
  const file = await writeExampleContract(binary, {
    ...(options.bug ? { bug: options.bug } : {}),
    ...(options.contract ? { extra: options.contract } : {}),
  });
  const contract = await loadContract(file);
  return runKit(
    {
      contract:
        options.metricsSettleMs === undefined
          ? contract
          : withMetricsSettle(contract, options.metricsSettleMs),
      cluster: {
        provider: "existing",
        kubeconfigPath: cluster.access.kubeconfigPath,
        context: cluster.access.context,
      },
      suites: options.suites,
      ...(options.checks ? { checks: options.checks } : {}),
      ...(options.scenario ? { scenario: options.scenario } : {}),
      strict: options.strict,
      keep: false,
      ...(options.parallel === undefined ? {} : { parallel: options.parallel }),
      ...(options.shard === undefined ? {} : { shard: options.shard }),
      workDir: options.workDir ?? join(dirname(file), "work"),
    },
    {
      runner: zxCommandRunner,
      logger: silentLogger,
      signal: new AbortController().signal,
      clock: systemClock,
      progress: quiet,
    },
  );
}

/** The contract with `settleMs` as its metrics' settle; an error when it reads no metrics. */
export function withMetricsSettle(contract: Contract, settleMs: number): Contract {
  const { operator } = contract;
  if (operator.mode !== "process" || !operator.metrics) {
    throw new Error("a settle is set for an operator whose contract reads no metrics");
  }
  return { ...contract, operator: { ...operator, metrics: { ...operator.metrics, settleMs } } };
}
