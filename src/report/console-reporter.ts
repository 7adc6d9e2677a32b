import type { CheckDefinition } from "../suites/check.js";
import { explorationLines } from "./exploration-text.js";
import type { ProgressReporter } from "../runner/run-kit.js";
import { diffText, type CheckReport, type RunReport, type Status } from "./report-model.js";
import type { StatusLine } from "./status-line.js";
import { waivedText } from "./waivers.js";

/** How a log line names a status (the console's and the job log's). */
export const MARK: Record<Status, string> = {
  passed: "PASS",
  failed: "FAIL",
  warned: "WARN",
  waived: "WAIVED",
  skipped: "SKIP",
  inconclusive: "INCONCLUSIVE",
};

/**
 * Live progress on a stream (stderr): a line per phase, per step of a long
 * scenario and per finished check with its time. Plain lines, so a CI log
 * reads the same as a terminal; on a terminal, `status` (a spinner line)
 * also shows the step under way and how long it has taken so far.
 */
export function consoleProgress(
  stream: NodeJS.WritableStream,
  clock: { now(): number },
  status?: StatusLine,
): ProgressReporter {
  const started = clock.now();
  const at = () => `[${((clock.now() - started) / 1000).toFixed(1).padStart(5)}s]`;
  const write = (line: string) => stream.write(`${at()} ${line}\n`);
  return {
    phase: (line) => {
      write(line);
      status?.set(line);
    },
    checkStarted: (check: CheckDefinition) => write(`${check.id} (${check.level}): ${check.summary}`),
    step: (check, line) => {
      write(`  ${line}`);
      status?.set(`${check.id}: ${line}`);
    },
    checkFinished: (report: CheckReport) => {
      write(`${MARK[report.status]} ${report.id} (${(report.durationMs / 1000).toFixed(1)}s)`);
      for (const scenario of report.scenarios) {
        write(`  ${MARK[scenario.status].toLowerCase()}: ${scenario.target}: ${scenario.message}`);
        if (scenario.waived) write(`    ${waivedText(scenario.waived)}`);
      }
    },
  };
}

/** The closing summary: each check's verdict, then the evidence of everything that did not pass. */
export function renderSummary(report: RunReport): string {
  const lines: string[] = [""];
  for (const notice of report.notices ?? []) lines.push(`NOTE: ${notice}`);
  if ((report.notices ?? []).length > 0) lines.push("");
  if (report.exploration) {
    const [first, ...rest] = explorationLines(report.exploration);
    lines.push(`EXPLORED: ${first ?? ""}`, ...rest.map((line) => `  ${line}`), "");
  }
  const counts = new Map<Status, number>();
  for (const check of report.checks) counts.set(check.status, (counts.get(check.status) ?? 0) + 1);
  for (const check of report.checks) {
    lines.push(`${MARK[check.status].padEnd(12)} ${check.id} (${check.level})`);
  }
  for (const check of report.checks.filter((c) => c.status !== "passed" && c.status !== "skipped")) {
    lines.push("", `${MARK[check.status]} ${check.id} — see ${check.docs}`);
    for (const scenario of check.scenarios.filter((s) => s.status !== "passed")) {
      lines.push(`  ${scenario.target}: ${scenario.message}`);
      if (scenario.waived) lines.push(`    ${waivedText(scenario.waived)}`);
      const evidence = scenario.evidence;
      for (const write of evidence?.writes ?? []) lines.push(`    write ${JSON.stringify(write)}`);
      for (const diff of evidence?.diffs ?? []) {
        lines.push(`    ${diff.object} ${diff.path}: ${diffText(diff)}`);
      }
      for (const note of evidence?.notes ?? []) lines.push(`    ${note}`);
      for (const line of evidence?.operatorLog ?? []) lines.push(`    operator: ${line}`);
      if (scenario.rerun) lines.push(`    rerun it alone: ${scenario.rerun}`);
    }
  }
  const waivers = report.waivers ?? [];
  if (waivers.length > 0) lines.push("", "Waivers:");
  for (const waiver of waivers) lines.push(`  ${waiver.outcome.toUpperCase()}: ${waiver.message}`);
  const order: Status[] = ["passed", "failed", "warned", "waived", "inconclusive", "skipped"];
  lines.push(
    "",
    `${MARK[report.status]}: ${order
      .filter((s) => s !== "waived" || counts.has(s))
      .map((s) => `${counts.get(s) ?? 0} ${s}`)
      .join(", ")} in ${(report.durationMs / 1000).toFixed(1)}s${report.strict ? " (strict)" : ""}`,
  );
  return `${lines.join("\n")}\n`;
}
