/**
 * The full default run on the reference operator, cluster boot included:
 * `run` with every suite the kit implements on the bundled example
 * operator (its contract as written: namespaced, so scenarios run side by
 * side), repeated, with the median wall time, the scenario count, the time
 * per scenario and where the time goes.
 *
 *   npm run bench:run [-- --runs 3] [-- --parallel N]
 *
 * Budget (issue 9): <= 120 s on 2 cores, aim 60 s.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parseClusterConfig, processEnvironment } from "../src/cluster/cluster-config.js";
import { loadContract } from "../src/contract/load-contract.js";
import { zxCommandRunner } from "../src/process/command-runner.js";
import { runKit, type ProgressReporter } from "../src/runner/run-kit.js";
import { scenarioParallelism } from "../src/runner/parallelism.js";
import { SCENARIO_LIFETIME, Timings } from "../src/scenario/timings.js";
import { systemClock } from "../src/util/clock.js";
import { silentLogger } from "../src/util/logger.js";
import { exampleDir, exampleOperatorBinary } from "../test/support/webapp-example.js";

const { values } = parseArgs({
  options: { runs: { type: "string", default: "3" }, parallel: { type: "string" } },
});
const runs = Number(values.runs);
exampleOperatorBinary(); // built before the clock starts, as a run on a warm machine finds it
const contract = await loadContract(join(exampleDir, "reconcile-conformance.yaml"));
const parallel = scenarioParallelism({
  contract,
  ...(values.parallel ? { parallel: Number(values.parallel) } : {}),
});
const quiet: ProgressReporter = {
  phase: () => undefined,
  checkStarted: () => undefined,
  step: () => undefined,
  checkFinished: () => undefined,
};

interface Sample {
  readonly wall: number;
  readonly timings: Timings;
  readonly scenarios: number;
  readonly scenarioSeconds: number;
  readonly status: string;
  readonly checks: number;
}
const samples: Sample[] = [];
for (let i = 1; i <= runs; i++) {
  const timings = new Timings();
  const cluster = parseClusterConfig(
    { provider: "kwok", name: `rc-bench-run-${randomBytes(3).toString("hex")}` },
    processEnvironment(),
  );
  const started = performance.now();
  const report = await runKit(
    {
      contract,
      cluster,
      strict: false,
      keep: false,
      parallel,
      workDir: await mkdtemp(join(tmpdir(), "rc-bench-run-")),
    },
    {
      runner: zxCommandRunner,
      logger: silentLogger,
      signal: new AbortController().signal,
      clock: systemClock,
      progress: quiet,
      timings,
    },
  );
  const wall = (performance.now() - started) / 1000;
  const scenarios = timings.counts.get(SCENARIO_LIFETIME) ?? 0;
  const scenarioSeconds = (timings.totals.get(SCENARIO_LIFETIME) ?? 0) / 1000;
  samples.push({
    wall,
    timings,
    scenarios,
    scenarioSeconds,
    status: report.status,
    checks: report.checks.length,
  });
  console.log(
    `run ${i}/${runs}: ${wall.toFixed(1)} s, ${report.checks.length} checks, ${scenarios} scenarios, ${report.status}`,
  );
}
const byWall = [...samples].sort((a, b) => a.wall - b.wall);
const median = byWall[Math.floor(byWall.length / 2)];
if (!median) throw new Error("no run");
const seconds = (ms: number | undefined) => ((ms ?? 0) / 1000).toFixed(1).padStart(6);
const scenarioSeconds = (sample: Sample) => sample.scenarioSeconds.toFixed(1);
console.log(
  `\nfull default run (every implemented suite, cluster boot included, ${parallel} scenario(s) side by side): median ${median.wall.toFixed(1)} s (min ${byWall[0]?.wall.toFixed(1)}, max ${byWall.at(-1)?.wall.toFixed(1)})  [budget <= 120 s, aim 60 s]`,
);
console.log(
  `scenarios: ${median.scenarios} (references included); ${(median.scenarioSeconds / Math.max(1, median.scenarios)).toFixed(1)} s each on average, ${(median.wall / Math.max(1, median.scenarios)).toFixed(1)} s of wall time each with ${parallel} side by side; verdict ${median.status}`,
);
const { timings } = median;
const cluster = (timings.totals.get("cluster start") ?? 0) + (timings.totals.get("cluster delete") ?? 0);
console.log(
  `where the time goes (median run; ${scenarioSeconds(median)} s of scenarios, summed over scenarios that overlap):`,
);
console.log(`  ${"cluster start + delete (wall)".padEnd(42)} ${seconds(cluster)} s`);
const phases = [...timings.totals].filter(([p]) => !p.startsWith("cluster ") && p !== SCENARIO_LIFETIME);
for (const [phase, ms] of phases.sort((a, b) => b[1] - a[1])) {
  console.log(`  ${phase.padEnd(42)} ${seconds(ms)} s over ${timings.counts.get(phase) ?? 0}`);
}
const phaseSum = phases.reduce((sum, [, ms]) => sum + ms, 0) / 1000;
console.log(
  `  ${"the rest (checks' own waits and reads)".padEnd(42)} ${(median.scenarioSeconds - phaseSum).toFixed(1).padStart(6)} s`,
);
