/**
 * The operator's log as evidence shows it: each distinct line once (an
 * error repeated with its stack trace on every retry is one line, with how
 * many times it came), and no line about another scenario's namespace (a
 * cluster-wide operator logs the namespaces of the scenarios beside its own,
 * and of earlier ones as they terminate). Pure.
 */

/** How the kit names a scenario's namespace: rc-<slug>-<6 hex digits> (Scenario.open). */
const SCENARIO_NAMESPACE = /\brc-[a-z0-9-]+?-[0-9a-f]{6}\b/g;

/** Timestamps that make repeats of one message differ: ISO times, and epoch seconds in JSON logs. */
const TIMES = [
  /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g,
  /"(?:ts|time)":\s*[\d.e+]+/g,
];

export interface LogExcerpt {
  /** The last `count` distinct lines, in the order of their last occurrence, repeats marked "(xN)". */
  readonly lines: readonly string[];
  /** Lines left out because they are about other scenarios' namespaces. */
  readonly foreign: number;
}

/** The last `count` distinct lines of `lines` that are not about a namespace other than `namespace`. */
export function logExcerpt(lines: readonly string[], namespace: string, count: number): LogExcerpt {
  let foreign = 0;
  const seen = new Map<string, { line: string; times: number; last: number }>();
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    const namespaces: readonly string[] = line.match(SCENARIO_NAMESPACE) ?? [];
    if (namespaces.length > 0 && !namespaces.includes(namespace)) {
      foreign++;
      return;
    }
    const key = TIMES.reduce((text, time) => text.replace(time, "<time>"), line.trim());
    const known = seen.get(key);
    seen.set(key, { line: known?.line ?? line, times: (known?.times ?? 0) + 1, last: index });
  });
  const distinct = [...seen.values()].sort((a, b) => a.last - b.last).slice(-count);
  return {
    lines: distinct.map((d) => (d.times > 1 ? `${d.line} (x${d.times})` : d.line)),
    foreign,
  };
}
