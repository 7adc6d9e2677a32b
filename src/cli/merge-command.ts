import { resolve } from "node:path";
import { ExitCode, UsageError } from "../errors.js";
import { renderSummary } from "../report/console-reporter.js";
import { mergeReports, readReport } from "../report/merge-reports.js";
import { writeReportFiles } from "../report/report-files.js";
import { exitCodeOfReport } from "../report/report-model.js";
import { parseFlags } from "./arguments.js";
import type { CommandContext } from "./main.js";

export const mergeFlags = {
  "report-dir": { type: "string" },
  summary: { type: "string" },
  verbose: { type: "boolean" },
} as const;

/**
 * `merge REPORT.json...`: the shards' reports of one run (`run --shard i/n`
 * in the jobs of a matrix) joined into one verdict, written as the same
 * files a whole run writes; the exit code is the merged run's.
 */
export async function mergeCommand(args: string[], context: CommandContext): Promise<ExitCode> {
  const { values, positionals } = parseFlags(args, mergeFlags, "merge");
  if (positionals.length === 0) {
    throw new UsageError(
      "cli/missing-argument",
      "merge: give the report.json of every shard, e.g. merge shard-1/report.json shard-2/report.json",
    );
  }
  const shards = await Promise.all(positionals.map((file) => readReport(file)));
  const merged = mergeReports(shards);
  context.stderr.write(renderSummary(merged));
  const files = await writeReportFiles(
    merged,
    resolve(values["report-dir"] ?? "reconcile-conformance-report"),
    {
      ...(values.summary === undefined ? {} : { summaryFile: resolve(values.summary) }),
    },
  );
  context.stderr.write(
    `merged ${shards.length} shard report(s): ${files.json} (also ${files.junit}, ${files.summary})\n`,
  );
  return exitCodeOfReport(merged);
}
