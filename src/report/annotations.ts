import { isMap, isNode, isScalar, isSeq, LineCounter, parseDocument } from "yaml";
import { printable } from "./evidence-text.js";
import type { CheckReport, RunReport, ScenarioReport } from "./report-model.js";

/** A GitHub annotation, before any `@actions/core` call: the Action makes `core.error`/`core.warning` of it. */
export interface Annotation {
  readonly level: "error" | "warning";
  readonly title: string;
  readonly message: string;
  /** The contract file, when the caller gave its text. */
  readonly file?: string;
  /** 1-based line in `file`. */
  readonly line?: number;
}

/** Longest annotation message; GitHub shows annotations in a narrow panel. */
const MAX_MESSAGE_CHARS = 1500;
const MAX_VERDICT_CHARS = 300;

/** Suites whose checks judge the API server itself, not the operator on the contract's sample. */
const CLUSTER_SUITES: ReadonlySet<string> = new Set(["cluster"]);

/**
 * An error per check that failed the run (every failed MUST check, and a
 * SHOULD check in a strict run), a warning per warned SHOULD check: one per
 * check, its message listing the failing scenarios' verdicts (capped), on
 * the contract line it is about when there is one.
 *
 * Which line, checked in this order:
 * 1. a failing scenario's message (what went wrong), else its target, else its evidence notes
 *    names a spec the way the suites do: "update k" is the contract's
 *    `updates[k-1]`; "spec k" is the sample with the first k updates
 *    applied, so its last update `updates[k-1]`, and "spec 0" the `sample`
 *    (the first scenario that names one decides);
 * 2. otherwise, for checks about the custom resource and its children
 *    (every suite but `cluster`), the line of `sample`;
 * 3. otherwise (a cluster check, a spec the contract does not have and no
 *    `sample` line, a contract that does not parse), the file without a line.
 * Without `contract`, no file at all.
 *
 * And an error per expired waiver, a warning per stale one, on its line.
 */
export function annotationsOf(report: RunReport, contract?: { file: string; text: string }): Annotation[] {
  const lines = contract ? contractLines(contract.text) : undefined;
  const annotations: Annotation[] = [];
  for (const check of report.checks) {
    if (check.status !== "failed" && check.status !== "warned") continue;
    const failing = check.scenarios.filter((s) => s.status === check.status);
    const line = lines ? lineOf(check, failing, lines) : undefined;
    annotations.push({
      level: check.status === "failed" ? "error" : "warning",
      title: `${check.id} (${check.level}) ${check.status === "failed" ? "failed" : "warns"}: ${failing.length} scenario(s)`,
      message: message(check, failing),
      ...(contract ? { file: contract.file } : {}),
      ...(line === undefined ? {} : { line }),
    });
  }
  for (const waiver of report.waivers ?? []) {
    if (waiver.outcome !== "expired" && waiver.outcome !== "stale") continue;
    const index = Number(/\[(\d+)\]/.exec(waiver.rule)?.[1]);
    const line = lines?.waivers[index];
    annotations.push({
      level: waiver.outcome === "expired" ? "error" : "warning",
      title: `${waiver.rule} (${waiver.check}) is ${waiver.outcome}`,
      message: oneLine(waiver.message, MAX_MESSAGE_CHARS),
      ...(contract ? { file: contract.file } : {}),
      ...(line === undefined ? {} : { line }),
    });
  }
  return annotations;
}

function message(check: CheckReport, failing: readonly ScenarioReport[]): string {
  const footer = `See ${check.docs}.`;
  const lines: string[] = [];
  let length = footer.length;
  for (const [index, scenario] of failing.entries()) {
    const verdict = oneLine(`${scenario.target}: ${scenario.message}`, MAX_VERDICT_CHARS);
    const more = `… and ${failing.length - index} more`;
    // Keep room for the "and N more" line unless this is the last verdict.
    const room = index === failing.length - 1 ? 0 : more.length + 1;
    if (length + verdict.length + 1 + room > MAX_MESSAGE_CHARS) {
      lines.push(more);
      break;
    }
    lines.push(verdict);
    length += verdict.length + 1;
  }
  return [...lines, footer].join("\n");
}

function oneLine(text: string, maxChars: number): string {
  const flat = printable(text).replace(/\s+/g, " ").trim();
  return flat.length <= maxChars ? flat : `${flat.slice(0, maxChars - 1)}…`;
}

/** The 1-based lines of the contract's `sample` key and of each item of `updates` and `waivers`. */
interface ContractLines {
  readonly sample?: number;
  readonly updates: readonly (number | undefined)[];
  readonly waivers: readonly (number | undefined)[];
}

function contractLines(text: string): ContractLines {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter });
  const root = document.contents;
  if (!isMap(root)) return { updates: [], waivers: [] };
  const lineAt = (node: unknown): number | undefined => {
    const start = isNode(node) ? node.range?.[0] : undefined;
    return start === undefined ? undefined : lineCounter.linePos(start).line;
  };
  const pair = (key: string) => root.items.find((p) => isScalar(p.key) && p.key.value === key);
  const sample = pair("sample");
  const items = (key: string) => {
    const value = pair(key)?.value;
    return isSeq(value) ? value.items.map(lineAt) : [];
  };
  return {
    ...(sample ? { sample: lineAt(sample.key) } : {}),
    updates: items("updates"),
    waivers: items("waivers"),
  };
}

function lineOf(
  check: CheckReport,
  failing: readonly ScenarioReport[],
  lines: ContractLines,
): number | undefined {
  for (const scenario of failing) {
    const texts = [scenario.message, scenario.target, ...(scenario.evidence?.notes ?? [])];
    const spec = texts.map(specNamedIn).find((s) => s !== undefined);
    if (spec === undefined) continue;
    const line = spec === 0 ? lines.sample : lines.updates[spec - 1];
    if (line !== undefined) return line;
  }
  return CLUSTER_SUITES.has(check.id.split("/")[0] ?? "") ? undefined : lines.sample;
}

/** The spec a text names: k for "update k" and for "spec k" (0 the sample), as the suites write them. */
function specNamedIn(text: string): number | undefined {
  const match = /\b(update|spec)\s+(\d+)\b/i.exec(text);
  return match?.[2] === undefined ? undefined : Number(match[2]);
}
