import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { writeJsonReport } from "./json-report.js";
import { renderJUnit } from "./junit-report.js";
import { renderMarkdownSummary } from "./markdown-summary.js";
import type { RunReport } from "./report-model.js";

/** Where a run's report went: the files CI uploads as its artifact. */
export interface ReportFiles {
  readonly json: string;
  readonly junit: string;
  /** The Markdown summary (the Action also appends it to the job summary). */
  readonly summary: string;
  /** The Markdown, as written. */
  readonly summaryMarkdown: string;
}

/**
 * Writes report.json, junit.xml and summary.md into `directory` (next to
 * the scenarios' write logs and operator logs), and the summary also to
 * `summaryFile` when one is asked for.
 */
export async function writeReportFiles(
  report: RunReport,
  directory: string,
  options: {
    readonly summaryFile?: string;
    readonly docsBaseUrl?: string;
    /** Where paths in the summary are shown from; the working directory by default. */
    readonly baseDir?: string;
  } = {},
): Promise<ReportFiles> {
  const docsBaseUrl = options.docsBaseUrl ?? report.docsBaseUrl;
  const json = await writeJsonReport(
    docsBaseUrl === undefined ? report : { ...report, docsBaseUrl },
    directory,
  );
  const junit = join(directory, "junit.xml");
  await writeFile(junit, renderJUnit(report));
  const summaryMarkdown = renderMarkdownSummary(report, {
    artifactHint: `${json} and the scenarios' write logs beside it`,
    ...(docsBaseUrl ? { docsBaseUrl } : {}),
    baseDir: options.baseDir ?? process.cwd(),
  });
  const summary = join(directory, "summary.md");
  await writeFile(summary, summaryMarkdown);
  if (options.summaryFile) {
    await mkdir(dirname(options.summaryFile), { recursive: true });
    await writeFile(options.summaryFile, summaryMarkdown);
  }
  return { json, junit, summary, summaryMarkdown };
}
