import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { parseClusterConfig } from "../cluster/index.js";
import { loadContract } from "../contract/load-contract.js";
import { ExitCode, UsageError } from "../errors.js";
import { consoleProgress, renderSummary } from "../report/console-reporter.js";
import { StatusLine } from "../report/status-line.js";
import { writeJsonReport } from "../report/json-report.js";
import { exitCodeOfReport } from "../report/report-model.js";
import { runKit } from "../runner/run-kit.js";
import { systemClock } from "../util/clock.js";
import { parseFlags } from "./arguments.js";
import { clusterFlags } from "./cluster-commands.js";
import type { CommandContext } from "./main.js";

export const runFlags = {
  config: { type: "string" },
  cluster: { type: "string" },
  suite: { type: "string" },
  check: { type: "string", multiple: true },
  "report-dir": { type: "string" },
  strict: { type: "boolean" },
  keep: { type: "boolean" },
  parallel: { type: "string" },
  name: clusterFlags.name,
  "bin-dir": clusterFlags["bin-dir"],
  "node-image": clusterFlags["node-image"],
  kubeconfig: clusterFlags.kubeconfig,
  context: clusterFlags.context,
  verbose: clusterFlags.verbose,
} as const;

/** `run`: the contract's suites against a cluster; the verdicts on stderr and in report.json. */
export async function runCommand(args: string[], context: CommandContext): Promise<ExitCode> {
  const { values, positionals } = parseFlags(args, runFlags, "run");
  if (positionals.length > 0) {
    throw new UsageError("cli/unexpected-argument", `run: unexpected argument "${positionals[0]}"`);
  }
  const contract = await loadContract(values.config ?? "reconcile-conformance.yaml");
  const cluster = parseClusterConfig(
    {
      provider: values.cluster,
      // A cluster of its own per run unless named: two runs side by side never share one.
      name: values.name ?? `rc-run-${randomBytes(3).toString("hex")}`,
      binDir: values["bin-dir"],
      nodeImage: values["node-image"],
      kubeconfig: values.kubeconfig,
      context: values.context,
    },
    context.environment,
  );
  const reportDir = resolve(values["report-dir"] ?? "reconcile-conformance-report");
  const parallel = values.parallel === undefined ? undefined : Number(values.parallel);
  if (parallel !== undefined && (!Number.isInteger(parallel) || parallel < 1)) {
    throw new UsageError(
      "cli/invalid-parallel",
      `run: --parallel ${values.parallel}: expected a whole number >= 1`,
    );
  }
  // A spinner line only on a terminal; CI logs get the same plain lines without it.
  const status = StatusLine.start(context.stderr, { clock: systemClock, env: context.environment.env });
  let report;
  try {
    report = await runKit(
      {
        contract,
        cluster,
        ...(values.suite
          ? {
              suites: values.suite
                .split(",")
                .map((s) => s.trim())
                .filter(Boolean),
            }
          : {}),
        ...(values.check
          ? {
              checks: values.check
                .flatMap((c) => c.split(","))
                .map((c) => c.trim())
                .filter(Boolean),
            }
          : {}),
        strict: values.strict ?? false,
        keep: values.keep ?? false,
        ...(parallel === undefined ? {} : { parallel }),
        workDir: resolve(reportDir, "scenarios"),
      },
      {
        runner: context.runner,
        logger: context.logger,
        signal: context.signal,
        clock: systemClock,
        progress: consoleProgress(context.stderr, systemClock, status),
      },
    );
  } finally {
    status?.stop();
  }
  context.stderr.write(renderSummary(report));
  const path = await writeJsonReport(report, reportDir);
  context.stderr.write(`report: ${path}\n`);
  return exitCodeOfReport(report);
}
