/**
 * The full default run on the reference operator, cluster boot included:
 * `run --suite drift,status-stability` on the bundled example operator,
 * repeated, with the median wall time, the scenario count and where the
 * time goes.
 *
 *   npm run bench:run [-- --runs 3]
 *
 * Budget (DESIGN.md section 6): <= 120 s on 2 cores (stretch 60 s).
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
import { Timings } from "../src/runner/scenario.js";
import { systemClock } from "../src/util/clock.js";
import { silentLogger } from "../src/util/logger.js";
import { exampleDir, exampleOperatorBinary } from "../test/support/webapp-example.js";

const { values } = parseArgs({ options: { runs: { type: "string", default: "3" } } });
const runs = Number(values.runs);
exampleOperatorBinary(); // built before the clock starts, as a run on a warm machine finds it
const contract = await loadContract(join(exampleDir, "reconcile-conformance.yaml"));
const quiet: ProgressReporter = {
  phase: () => undefined,
  checkStarted: () => undefined,
  step: () => undefined,
  checkFinished: () => undefined,
};

const walls: number[] = [];
let lastTimings: Timings | undefined;
let scenarios = 0;
let verdict = "";
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
      suites: ["drift", "status-stability"],
      strict: false,
      keep: false,
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
  walls.push(wall);
  lastTimings = timings;
  scenarios = timings.counts.get("scenario cleanup") ?? 0;
  verdict = report.status;
  console.log(
    `run ${i}/${runs}: ${wall.toFixed(1)} s, ${report.checks.length} checks, ${scenarios} scenarios, ${report.status}`,
  );
}
walls.sort((a, b) => a - b);
const median = walls[Math.floor(walls.length / 2)] ?? NaN;
console.log(
  `\nfull default run (drift + status-stability, cluster included): median ${median.toFixed(1)} s (min ${walls[0]?.toFixed(1)}, max ${walls.at(-1)?.toFixed(1)})  [budget <= 120 s, stretch 60 s]`,
);
console.log(`scenarios per run: ${scenarios} (+ the cluster check); verdict ${verdict}`);
console.log(
  "where the time goes (last run, summed over scenarios; phases overlap nothing, the rest is checks' own waits):",
);
for (const [phase, ms] of [...(lastTimings?.totals ?? [])].sort((a, b) => b[1] - a[1])) {
  console.log(
    `  ${phase.padEnd(38)} ${(ms / 1000).toFixed(1).padStart(6)} s over ${lastTimings?.counts.get(phase) ?? 0}`,
  );
}
