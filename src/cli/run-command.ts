import { reportLeftovers } from "../cleanup/leftovers.js";
import { ExitCode, UsageError } from "../errors.js";
import { consoleProgress, renderSummary } from "../report/console-reporter.js";
import { StatusLine } from "../report/status-line.js";
import { writeReportFiles } from "../report/report-files.js";
import { exitCodeOfReport } from "../report/report-model.js";
import { runKit } from "../runner/run-kit.js";
import { prepareRun } from "../runner/run-options.js";
import { systemClock } from "../util/clock.js";
import { parseFlags } from "./arguments.js";
import { binariesFlag, clusterFlags, prepareClusterBinaries } from "./cluster-commands.js";
import type { CommandContext } from "./main.js";

export const runFlags = {
  config: { type: "string" },
  cluster: { type: "string" },
  suite: { type: "string", multiple: true },
  check: { type: "string", multiple: true },
  "report-dir": { type: "string" },
  summary: { type: "string" },
  strict: { type: "boolean" },
  keep: { type: "boolean" },
  parallel: { type: "string" },
  shard: { type: "string" },
  scenario: { type: "string" },
  "generated-updates": { type: "string" },
  seed: { type: "string" },
  "update-faults": { type: "string" },
  name: clusterFlags.name,
  "bin-dir": clusterFlags["bin-dir"],
  ...binariesFlag,
  "node-image": clusterFlags["node-image"],
  kubeconfig: clusterFlags.kubeconfig,
  context: clusterFlags.context,
  verbose: clusterFlags.verbose,
} as const;

/** `run`: the contract's suites against a cluster; the verdicts on stderr, the report files in --report-dir. */
export async function runCommand(args: string[], context: CommandContext): Promise<ExitCode> {
  const { values, positionals } = parseFlags(args, runFlags, "run");
  if (positionals.length > 0) {
    throw new UsageError("cli/unexpected-argument", `run: unexpected argument "${positionals[0]}"`);
  }
  const prepared = await prepareRun(
    {
      ...(values.config === undefined ? {} : { config: values.config }),
      cluster: {
        provider: values.cluster,
        name: values.name,
        binDir: values["bin-dir"],
        nodeImage: values["node-image"],
        kubeconfig: values.kubeconfig,
        context: values.context,
      },
      ...(values.suite ? { suites: values.suite } : {}),
      ...(values.check ? { checks: values.check } : {}),
      ...(values["report-dir"] === undefined ? {} : { reportDir: values["report-dir"] }),
      ...(values.summary === undefined ? {} : { summaryFile: values.summary }),
      strict: values.strict ?? false,
      keep: values.keep ?? false,
      ...(values.parallel === undefined ? {} : { parallel: values.parallel }),
      ...(values.shard === undefined ? {} : { shard: values.shard }),
      ...(values.scenario === undefined ? {} : { scenario: values.scenario }),
      ...(values["generated-updates"] === undefined ? {} : { generatedUpdates: values["generated-updates"] }),
      ...(values.seed === undefined ? {} : { seed: values.seed }),
      ...(values["update-faults"] === undefined ? {} : { updateFaults: values["update-faults"] }),
    },
    context.environment,
  );
  await reportLeftovers(context.environment, context.logger);
  await prepareClusterBinaries(prepared.config.cluster, values.binaries, context);
  // A spinner line only on a terminal; CI logs get the same plain lines without it.
  const status = StatusLine.start(context.stderr, { clock: systemClock, env: context.environment.env });
  let report;
  try {
    report = await runKit(prepared.config, {
      runner: context.runner,
      logger: context.logger,
      signal: context.signal,
      clock: systemClock,
      progress: consoleProgress(context.stderr, systemClock, status),
    });
  } finally {
    status?.stop();
  }
  context.stderr.write(renderSummary(report));
  const files = await writeReportFiles(report, prepared.reportDir, {
    ...(prepared.summaryFile ? { summaryFile: prepared.summaryFile } : {}),
  });
  context.stderr.write(`report: ${files.json} (also ${files.junit}, ${files.summary})\n`);
  if (prepared.summaryFile) context.stderr.write(`summary: ${prepared.summaryFile}\n`);
  return exitCodeOfReport(report);
}
