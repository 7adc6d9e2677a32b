import { compactJson, describeWrite, printable, writeFacts, type WriteFacts } from "./evidence-text.js";
import { explorationLines } from "./exploration-text.js";
import type { CheckReport, Evidence, RunReport, ScenarioReport, Status } from "./report-model.js";
import { waivedText, type WaiverOutcome } from "./waivers.js";
import { pathFrom } from "../util/files.js";

export interface MarkdownSummaryOptions {
  /**
   * The most UTF-8 bytes the summary may take (default 1,000,000: GitHub
   * refuses a job summary over 1 MiB, and the Action may append a little).
   */
  readonly maxBytes?: number;
  /** Where the whole evidence is, named whenever some is left out (default: the JSON report). */
  readonly artifactHint?: string;
  /** Prefix of the links to docs/checks/<id>.md, e.g. a GitHub blob URL (default: the bare path). */
  readonly docsBaseUrl?: string;
  /**
   * The directory paths are shown from (the contract's, relative when under it): the job's
   * workspace, as annotations and the rerun command name files. Absent: paths as the report has them.
   */
  readonly baseDir?: string;
}

export const DEFAULT_SUMMARY_MAX_BYTES = 1_000_000;

const MARK: Record<Status, string> = {
  passed: "✅",
  failed: "❌",
  warned: "⚠️",
  waived: "🔕",
  skipped: "⏭️",
  inconclusive: "❔",
};

const ORDER: readonly Status[] = ["passed", "failed", "warned", "waived", "inconclusive", "skipped"];

/** Scenarios whose evidence the summary shows. */
const SHOWN: ReadonlySet<Status> = new Set(["failed", "warned", "waived", "inconclusive"]);

/**
 * Per-block caps, whatever the size limit: a block stays readable, and a
 * Mermaid diagram stays under the text size Mermaid renders (50,000 chars).
 */
const LIMITS = {
  diagramWrites: 40,
  notes: 30,
  noteChars: 2000,
  diffRows: 50,
  diffValueChars: 300,
  logLines: 40,
  logLineChars: 500,
  otherEntries: 20,
  otherEntryChars: 500,
  summaryMessageChars: 300,
  messageChars: 5000,
  diffNameChars: 300,
  labelChars: 120,
} as const;

/**
 * The GitHub job summary (also `--summary FILE`): a headline, a table of
 * checks, then per scenario that failed, warned or was inconclusive a
 * collapsed block with its verdict, docs link, fault point, field diff and
 * writes as a Mermaid sequence diagram. Everything the report carries is
 * escaped: it may hold any text an operator or a cluster produced. The
 * output never exceeds `maxBytes`: evidence blocks are shortened first
 * (the largest, then the latest), then left out, with a pointer to the
 * artifact that has it all.
 */
export function renderMarkdownSummary(report: RunReport, options: MarkdownSummaryOptions = {}): string {
  const maxBytes = options.maxBytes ?? DEFAULT_SUMMARY_MAX_BYTES;
  const hint = options.artifactHint ?? "the JSON report (report.json)";
  const head = [
    headline(report, options.baseDir),
    checkTable(report, options.docsBaseUrl),
    waiverTable(report),
    explorationBlock(report),
  ].join("\n");
  const blocks: EvidenceBlock[] = [];
  for (const check of report.checks) {
    if (!SHOWN.has(check.status)) continue;
    for (const scenario of check.scenarios) {
      if (SHOWN.has(scenario.status)) blocks.push(evidenceBlock(check, scenario, options.docsBaseUrl, hint));
    }
  }
  return fitted(head, blocks, maxBytes, hint);
}

/** Spec exploration, folded: what was made up, chosen and dropped; empty when it did not run. */
function explorationBlock(report: RunReport): string {
  if (!report.exploration) return "";
  const [first, ...rest] = explorationLines(report.exploration);
  return [
    "<details><summary>" + md(first ?? "") + "</summary>",
    "",
    ...rest.map((line) => `- ${md(line)}`),
    "",
    "</details>",
    "",
  ].join("\n");
}

function headline(report: RunReport, baseDir: string | undefined): string {
  const counts = new Map<Status, number>();
  for (const check of report.checks) counts.set(check.status, (counts.get(check.status) ?? 0) + 1);
  const scenarios = report.checks.reduce((sum, c) => sum + c.scenarios.length, 0);
  const shard = report.shard;
  const cluster = `${md(report.cluster.provider)}${report.cluster.name ? ` (${md(report.cluster.name)})` : ""}`;
  const context = [
    `**Contract:** <code>${md(baseDir === undefined ? report.contract : pathFrom(baseDir, report.contract))}</code>`,
    `**Cluster:** ${cluster}`,
    ...(shard ? [`**Shard:** ${shard.index} of ${shard.count}`] : []),
    ...(report.strict ? ["**Strict:** SHOULD failures fail the run"] : []),
  ];
  return [
    `## ${MARK[report.status]} reconcile-conformance: ${report.status}`,
    "",
    `**Checks:** ${ORDER.filter((s) => s !== "waived" || counts.has(s))
      .map((s) => `${counts.get(s) ?? 0} ${s}`)
      .join(" · ")} (${scenarios} scenario(s)) · **Time:** ${duration(report.durationMs)}`,
    "",
    context.join(" · "),
    "",
    ...(report.notices ?? []).flatMap((notice) => [`> **Note:** ${md(notice)}`, ""]),
  ].join("\n");
}

function checkTable(report: RunReport, docsBaseUrl: string | undefined): string {
  const rows = report.checks.map((check) => {
    const link = `[${md(check.id)}](${linkTarget(docsUrl(check, docsBaseUrl))})`;
    const total = check.scenarios.length;
    const matching = check.scenarios.filter((s) => s.status === check.status).length;
    const share = check.status === "passed" || check.status === "skipped" ? "" : ` (${matching} of ${total})`;
    const elsewhere = check.elsewhere?.length ?? 0;
    const others = elsewhere > 0 ? `; ${elsewhere} in other shards` : "";
    return `| ${link} | ${check.level} | ${MARK[check.status]} ${check.status}${share}${others} | ${duration(check.durationMs)} |`;
  });
  return ["| Check | Level | Result | Time |", "| --- | --- | --- | --- |", ...rows, ""].join("\n");
}

const WAIVER_MARK: Record<WaiverOutcome, string> = {
  applied: "🔕 applied",
  stale: "⚠️ stale",
  expired: "❌ expired",
  "not-run": "⏭️ not run",
};

/** Every waiver of the contract and what became of it (nothing when it has none). */
function waiverTable(report: RunReport): string {
  const waivers = report.waivers ?? [];
  if (waivers.length === 0) return "";
  const rows = waivers.map(
    (w) =>
      `| <code>${md(w.rule)}</code> | ${md(w.check)}${w.target ? ` <code>${md(w.target)}</code>` : ""} | ${WAIVER_MARK[w.outcome]} | ${md(truncated(w.message, LIMITS.summaryMessageChars))} |`,
  );
  return [
    "### Waivers",
    "",
    "| Waiver | Check | Outcome | What became of it |",
    "| --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
}

interface EvidenceBlock {
  /** Everything the summary shows of the scenario. */
  readonly full: string;
  /** The verdict and docs link only, when the full block does not fit. */
  readonly short: string;
}

function evidenceBlock(
  check: CheckReport,
  scenario: ScenarioReport,
  docsBaseUrl: string | undefined,
  hint: string,
): EvidenceBlock {
  const id = `${check.id}#${scenario.target}`;
  const opening = [
    `<details><summary>${MARK[scenario.status]} <code>${md(id)}</code>: ${md(truncated(scenario.message, LIMITS.summaryMessageChars))}</summary>`,
    "",
    `**Verdict** (${check.level}, ${scenario.status}): ${md(truncated(scenario.message, LIMITS.messageChars))}`,
    "",
    ...(scenario.waived ? [`**Waived:** ${md(waivedText(scenario.waived))}`, ""] : []),
    ...(scenario.rerun
      ? ["Rerun it alone (keeping its cluster):", "", fenced("sh", scenario.rerun), ""]
      : []),
    `Documentation: [${md(check.docs)}](${linkTarget(docsUrl(check, docsBaseUrl))})`,
    "",
  ];
  const closing = ["</details>", ""];
  const evidence = evidenceSections(scenario.evidence, hint);
  return {
    full: [...opening, ...evidence, ...closing].join("\n"),
    short: [
      ...opening,
      ...(evidence.length > 0 ? [`_Evidence left out to fit the job summary: see ${md(hint)}._`, ""] : []),
      ...closing,
    ].join("\n"),
  };
}

function evidenceSections(evidence: Evidence | undefined, hint: string): string[] {
  if (!evidence) return [];
  const lines: string[] = [];
  const entries = (evidence.writes ?? []).map((entry) => ({ entry, facts: writeFacts(entry) }));
  const writes = entries.flatMap((e) => (e.facts ? [e.facts] : []));
  const others = entries.flatMap((e) => (e.facts ? [] : [e.entry]));

  const faults = writes.filter((w) => w.fault !== undefined);
  if (faults.length > 0) {
    lines.push("**Fault point:**", "", ...faults.map((w) => `- ${md(describeWrite(w))}`), "");
  }
  const notes = evidence.notes ?? [];
  if (notes.length > 0) {
    lines.push(
      "**Notes:**",
      "",
      ...notes.slice(0, LIMITS.notes).map((n) => `- ${md(truncated(n, LIMITS.noteChars))}`),
      ...leftOut(notes.length - LIMITS.notes, "note(s)", hint),
      "",
    );
  }
  const diffs = evidence.diffs ?? [];
  if (diffs.length > 0) {
    const value = (v: unknown) => `<code>${md(truncated(compactJson(v), LIMITS.diffValueChars))}</code>`;
    lines.push(
      "**Field diff:**",
      "",
      "| Object | Path | Expected | Actual |",
      "| --- | --- | --- | --- |",
      ...diffs
        .slice(0, LIMITS.diffRows)
        .map(
          (d) =>
            `| ${md(truncated(d.object, LIMITS.diffNameChars))} | ${md(truncated(d.path, LIMITS.diffNameChars))} | ${d.sides ? `${md(d.sides.expected)}: ` : ""}${value(d.expected)} | ${d.sides ? `${md(d.sides.actual)}: ` : ""}${value(d.actual)} |`,
        ),
      "",
      ...leftOut(diffs.length - LIMITS.diffRows, "field(s)", hint),
    );
  }
  if (writes.length > 0) {
    lines.push("**Writes:**", "", fenced("mermaid", sequenceDiagram(writes, LIMITS.diagramWrites, hint)), "");
  }
  if (others.length > 0) {
    lines.push(
      "**Other write-log entries:**",
      "",
      fenced(
        "json",
        others
          .slice(0, LIMITS.otherEntries)
          .map((e) => truncated(compactJson(e), LIMITS.otherEntryChars))
          .join("\n"),
      ),
      "",
      ...leftOut(others.length - LIMITS.otherEntries, "entries", hint),
    );
  }
  const log = evidence.operatorLog ?? [];
  if (log.length > 0) {
    const tail = log.slice(-LIMITS.logLines);
    lines.push(
      `**Operator log** (last ${tail.length} line(s)):`,
      "",
      fenced("text", tail.map((l) => truncated(l, LIMITS.logLineChars)).join("\n")),
      "",
      ...leftOut(log.length - tail.length, "earlier log line(s)", hint),
    );
  }
  return lines;
}

function leftOut(count: number, what: string, hint: string): string[] {
  return count > 0 ? [`_${count} more ${what} in ${md(hint)}._`, ""] : [];
}

const PARTICIPANT = { operator: "Operator", kit: "Kit", api: "API" } as const;

/**
 * The writes as a Mermaid sequence diagram: an arrow from the writer
 * (Kit for the kit's writes, Operator for every other) to the API server
 * with the verb, object, resourceVersion sent and the answer; a return
 * arrow with the effect; a note where a fault acted. Past `max` writes it
 * keeps the fault writes and the latest others.
 */
export function sequenceDiagram(writes: readonly WriteFacts[], max: number, hint: string): string {
  const keep = new Set<WriteFacts>(writes.filter((w) => w.fault !== undefined).slice(-max));
  for (const write of [...writes].reverse()) {
    if (keep.size >= max) break;
    keep.add(write);
  }
  const shown = writes.filter((w) => keep.has(w));
  const lines = [
    "sequenceDiagram",
    `    participant ${PARTICIPANT.operator}`,
    `    participant ${PARTICIPANT.kit}`,
    `    participant ${PARTICIPANT.api} as API server`,
  ];
  const omitted = writes.length - shown.length;
  if (omitted > 0) {
    lines.push(
      `    Note over ${PARTICIPANT.operator},${PARTICIPANT.api}: ${mermaidLabel(`${omitted} earlier write(s) not shown: see ${hint}`)}`,
    );
  }
  for (const write of shown) {
    const from = write.actor === "kit" ? PARTICIPANT.kit : PARTICIPANT.operator;
    const sent = write.sentResourceVersion ? ` rv ${write.sentResourceVersion}` : "";
    const answer =
      write.code === undefined
        ? ""
        : ` → ${write.code === 0 ? "no answer" : write.code}${write.reason ? ` ${write.reason}` : ""}`;
    const seq = write.seq === undefined ? "" : `#${write.seq} `;
    const run = write.run === undefined ? "" : ` (run ${write.run})`;
    lines.push(
      `    ${from}->>${PARTICIPANT.api}: ${mermaidLabel(`${seq}${write.verb} ${write.object}${sent}${answer}${run}`)}`,
    );
    const effect = [
      write.effect ?? "effect unknown",
      ...(write.why ? [`(${write.why})`] : []),
      ...(write.resourceVersion ? [`now rv ${write.resourceVersion}`] : []),
    ].join(" ");
    lines.push(`    ${PARTICIPANT.api}-->>${from}: ${mermaidLabel(effect)}`);
    if (write.fault !== undefined) {
      lines.push(`    Note over ${from},${PARTICIPANT.api}: ${mermaidLabel(`fault ${write.fault}`)}`);
    }
  }
  return lines.join("\n");
}

/**
 * Text Mermaid takes as a sequence diagram message or note. Its lexer ends
 * message text at `;` (a statement separator), `#` (a comment) and a
 * newline; `%%` starts a comment; `wrap:`/`nowrap:` at the start are
 * directives; `<br>` and other HTML are markup; a line matching
 * `style…:…#…;` loses its last `;` before parsing. Mermaid decodes `#NNN;`
 * (a decimal code point) before it lexes, so: whitespace runs become one
 * space, the text is cut at `maxChars`, and every character but letters,
 * digits, space and `. , / _ ( ) = + - @ ! ? '` is written as `#NNN;`
 * (colons included, which rules out both the directive and the style
 * quirk). Never empty: the lexer needs at least one character.
 */
export function mermaidLabel(text: string, maxChars: number = LIMITS.labelChars): string {
  const plain = truncated(printable(text).replace(/\s+/g, " ").trim(), maxChars);
  let label = "";
  for (const char of plain) {
    label += /^[\p{L}\p{N} .,/_()=+\-@!?']$/u.test(char) ? char : `#${char.codePointAt(0) ?? 63};`;
  }
  return label === "" ? "-" : label;
}

/**
 * Text from the report, for Markdown and for the HTML of `<summary>`
 * alike: numeric character references work in both, so every character
 * that HTML or Markdown would read as markup (`& < > " |`, backslash,
 * backtick, `* _ [ ] ~`) is written as one, as is a list, heading or
 * quote marker at the start; newlines become `<br>` (table cells and
 * summaries are one line).
 */
export function md(text: string): string {
  return printable(text)
    .trim()
    .replace(/[&<>"|\\`*_[\]~]/g, (c) => `&#${c.charCodeAt(0)};`)
    .replace(/^([-+#=]|\d+[.)])/, (marker) => marker.replace(/[-+#=.)]/, (c) => `&#${c.charCodeAt(0)};`))
    .replace(/\r\n|\r|\n/g, "<br>");
}

/** A fenced code block whose fence is longer than any run of backticks in the text. */
function fenced(language: string, text: string): string {
  // Measured on the text as written: removing colour codes can join two runs of backticks.
  const written = printable(text);
  const longest = Math.max(0, ...[...written.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${language}\n${written}\n${fence}`;
}

function docsUrl(check: CheckReport, docsBaseUrl: string | undefined): string {
  return docsBaseUrl ? `${docsBaseUrl.replace(/\/+$/, "")}/${check.docs}` : check.docs;
}

/** A link destination Markdown cannot misread: spaces, parentheses and angle brackets percent-encoded. */
function linkTarget(url: string): string {
  return url.replace(/[\s()<>]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
}

/** At most `maxChars` UTF-16 units, "…" marking a cut; never splits a surrogate pair. */
function truncated(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = maxChars - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

function duration(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)}m ${String(whole % 60).padStart(2, "0")}s`;
}

function bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/**
 * Head and blocks within `maxBytes`: while too big, the largest full block
 * (the latest of equals) becomes its short form; when every block is short
 * and it is still too big, the latest blocks are left out; a notice under
 * the head says so. Sizes are summed, not re-rendered, so this stays
 * linear in the number of blocks.
 */
function fitted(head: string, blocks: readonly EvidenceBlock[], maxBytes: number, hint: string): string {
  if (blocks.length === 0) return withinBytes(head, maxBytes);
  const section = "### Evidence\n";
  const notice = (shortened: number, dropped: number) =>
    `> **Shortened to fit GitHub's job summary limit (${maxBytes} bytes):** the evidence of ${shortened + dropped} scenario(s) is left out here; it is all in ${md(hint)}.\n`;
  const droppedLine = (dropped: number) => `_${dropped} more scenario(s) not shown: see ${md(hint)}._\n`;
  const join = (parts: readonly string[]) => parts.filter((p) => p !== "").join("\n");

  const chosen = blocks.map((b) => b.full);
  const sizes = chosen.map(bytes);
  const fixed = bytes(head) + 1 + bytes(section) + 1;
  let total = fixed + sizes.reduce((sum, s) => sum + s + 1, 0);
  if (total <= maxBytes) return join([head, section, ...chosen]);

  const victims = blocks
    .map((block, index) => ({ index, size: bytes(block.full) }))
    .sort((a, b) => b.size - a.size || b.index - a.index);
  let shortened = 0;
  for (const victim of victims) {
    if (total + bytes(notice(shortened, 0)) + 1 <= maxBytes) break;
    const block = blocks[victim.index];
    if (!block || block.short === block.full) continue;
    chosen[victim.index] = block.short;
    total += bytes(block.short) - (sizes[victim.index] ?? 0);
    sizes[victim.index] = bytes(block.short);
    shortened++;
  }
  let kept = chosen.length;
  const budget = () =>
    bytes(notice(shortened, chosen.length - kept)) + 1 + bytes(droppedLine(chosen.length - kept)) + 1;
  while (kept > 0 && total + budget() > maxBytes) {
    kept--;
    total -= (sizes[kept] ?? 0) + 1;
    if (chosen[kept] !== blocks[kept]?.full) shortened--;
  }
  const dropped = chosen.length - kept;
  const text = join([
    head,
    notice(shortened, dropped),
    section,
    ...chosen.slice(0, kept),
    dropped > 0 ? droppedLine(dropped) : "",
  ]);
  return withinBytes(text, maxBytes);
}

/** The last resort when even the head does not fit: cut at the last whole line that does. */
function withinBytes(text: string, maxBytes: number): string {
  if (bytes(text) <= maxBytes) return text;
  const cut = Buffer.from(text, "utf8").subarray(0, maxBytes).toString("utf8");
  const lastLine = cut.lastIndexOf("\n");
  const whole = lastLine > 0 ? cut.slice(0, lastLine + 1) : cut;
  // A cut inside a character leaves U+FFFD, which may take more bytes than the partial character did.
  return bytes(whole) <= maxBytes ? whole : "";
}
