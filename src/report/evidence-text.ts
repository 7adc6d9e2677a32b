import { isRecord } from "../util/records.js";
import { diffText, type Evidence } from "./report-model.js";

// How evidence reads as text: shared by the JUnit and job-summary renderers (and the annotations),
// so a write reads the same in every report.

/**
 * A write-log entry as evidence carries it: the proxy's `WriteEntry`
 * (verb, resource, name, ...) or the suites' shorter `writeEvidence` form
 * (`write: "update deployments.apps/web"`). Shared by the JUnit and job
 * summary renderers so both read an entry the same way.
 */
export interface WriteFacts {
  readonly seq?: number;
  readonly actor?: string;
  /** The operator's run (1 for the first start, +1 per restart). */
  readonly run?: number;
  readonly verb: string;
  /** Kind-or-resource/name, e.g. "deployments.apps/web/status". */
  readonly object: string;
  readonly sentResourceVersion?: string;
  readonly resourceVersion?: string;
  readonly code?: number;
  readonly reason?: string;
  readonly effect?: string;
  readonly why?: string;
  readonly fault?: string;
  /** The fields a changed write changed. */
  readonly changed?: readonly string[];
}

const NUMBER_FIELDS = ["seq", "run", "code"] as const;
const STRING_FIELDS = [
  "actor",
  "verb",
  "write",
  "kind",
  "resource",
  "group",
  "name",
  "generateName",
  "subresource",
  "sentResourceVersion",
  "resourceVersion",
  "reason",
  "effect",
  "effectWhy",
  "why",
  "fault",
] as const;

/**
 * Reads an evidence entry; undefined when it is not one of the two shapes,
 * or when a field it has is of the wrong type: such an entry is shown as
 * JSON rather than half-read.
 */
export function writeFacts(entry: unknown): WriteFacts | undefined {
  if (!isRecord(entry)) return undefined;
  for (const field of NUMBER_FIELDS) {
    if (entry[field] !== undefined && typeof entry[field] !== "number") return undefined;
  }
  for (const field of STRING_FIELDS) {
    if (entry[field] !== undefined && typeof entry[field] !== "string") return undefined;
  }
  const text = (field: (typeof STRING_FIELDS)[number]): string | undefined => {
    const value = entry[field];
    return typeof value === "string" && value !== "" ? value : undefined;
  };
  const number = (field: (typeof NUMBER_FIELDS)[number]): number | undefined => {
    const value = entry[field];
    return typeof value === "number" ? value : undefined;
  };
  let verb = text("verb");
  let object: string | undefined;
  if (verb !== undefined) {
    const group = text("group");
    const type = text("kind") ?? `${text("resource") ?? "?"}${group ? `.${group}` : ""}`;
    const generated = text("generateName");
    const name = text("name") ?? (generated ? `${generated}*` : "");
    const subresource = text("subresource");
    object = `${type}/${name}${subresource ? `/${subresource}` : ""}`;
  } else {
    const match = /^(\S+)\s+(.+)$/.exec(text("write") ?? "");
    if (!match?.[1] || !match[2]) return undefined;
    verb = match[1];
    object = match[2];
  }
  const changed = entry.changedPaths ?? entry.changed;
  if (changed !== undefined && !(Array.isArray(changed) && changed.every((c) => typeof c === "string"))) {
    return undefined;
  }
  const optional = <K extends keyof WriteFacts>(key: K, value: WriteFacts[K] | undefined) =>
    value === undefined ? {} : { [key]: value };
  return {
    ...optional("seq", number("seq")),
    ...optional("actor", text("actor")),
    ...optional("run", number("run")),
    verb,
    object,
    ...optional("sentResourceVersion", text("sentResourceVersion")),
    ...optional("resourceVersion", text("resourceVersion")),
    ...optional("code", number("code")),
    ...optional("reason", text("reason")),
    ...optional("effect", text("effect")),
    ...optional("why", text("effectWhy") ?? text("why")),
    ...optional("fault", text("fault")),
    ...optional("changed", changed),
  };
}

/**
 * One line per write: "#12 operator (run 2) update deployments.apps/web
 * rv=41 -> 409 Conflict: rejected (why), now rv=42 [fault conflict-before]".
 */
export function describeWrite(write: WriteFacts): string {
  const who = write.actor ? ` ${write.actor}${write.run === undefined ? "" : ` (run ${write.run})`}` : "";
  const sent = write.sentResourceVersion ? ` rv=${write.sentResourceVersion}` : "";
  const answer =
    write.code === undefined
      ? ""
      : ` -> ${write.code === 0 ? "no answer" : write.code}${write.reason ? ` ${write.reason}` : ""}`;
  const effect = write.effect ? `${answer ? ":" : " ->"} ${write.effect}` : "";
  const why = write.why ? ` (${write.why})` : "";
  const now = write.resourceVersion ? `, now rv=${write.resourceVersion}` : "";
  const fault = write.fault ? ` [fault ${write.fault}]` : "";
  const changed = write.changed ? ` {changed ${write.changed.join(", ")}}` : "";
  const seq = write.seq === undefined ? "" : `#${write.seq}`;
  return `${seq}${who} ${write.verb} ${write.object}${sent}${answer}${effect}${why}${changed}${now}${fault}`.trim();
}

/** JSON on one line, for values of unknown shape; never throws (cycles, BigInt). */
export function compactJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The evidence as plain text, a section per kind, one item per line (continuations indented). */
export function evidenceText(evidence: Evidence | undefined): string {
  if (!evidence) return "";
  const sections: string[] = [];
  const section = (title: string, items: readonly string[]) => {
    if (items.length === 0) return;
    sections.push([title, ...items.map((item) => `  ${item.replace(/\r?\n/g, "\n    ")}`)].join("\n"));
  };
  section(
    "writes:",
    (evidence.writes ?? []).map((entry) => {
      const facts = writeFacts(entry);
      return facts ? describeWrite(facts) : compactJson(entry);
    }),
  );
  section(
    "field diffs:",
    (evidence.diffs ?? []).map((d) => `${d.object} ${d.path}: ${diffText(d, compactJson)}`),
  );
  section("notes:", evidence.notes ?? []);
  const log = evidence.operatorLog ?? [];
  section(`operator log (last ${log.length} line(s)):`, log);
  return sections.join("\n\n");
}

/**
 * Text fit for XML 1.0 and for a browser: ANSI colour sequences removed
 * (operator logs are full of them), then every character XML 1.0 cannot
 * carry at all (C0 controls but tab, LF and CR; U+FFFE, U+FFFF; unpaired
 * surrogates) replaced by U+FFFD. The job summary uses it too.
 */
export function printable(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex -- matching the escape character is the point
      .replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, "")
      .replace(
        // eslint-disable-next-line no-control-regex -- matching control characters is the point
        /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
        "\ufffd",
      )
  );
}
