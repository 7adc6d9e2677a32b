/**
 * The report: run -> checks -> scenarios, each with a status; a check's and
 * the run's status are derived from their children, never set by hand.
 * Serialisers (console, JSON) read this model and nothing else.
 */

import type { WaiverMark, WaiverReport } from "./waivers.js";

/** How one scenario ended; `waived`: failed (or warned), and a waiver of the contract accepts it for now. */
export type Status = "passed" | "failed" | "warned" | "waived" | "skipped" | "inconclusive";

/** MUST checks fail the run; SHOULD checks warn unless --strict. */
export type Level = "MUST" | "SHOULD";

/** Why a verdict is what it is: what the kit saw, for a person to check. */
export interface Evidence {
  /** Write-log entries that matter (the operator's, with their effects; the kit's stimuli). */
  readonly writes?: readonly unknown[];
  /** Expected vs actual, field by field. */
  readonly diffs?: readonly {
    readonly object: string;
    readonly path: string;
    readonly expected: unknown;
    readonly actual: unknown;
    /**
     * What the two sides are, when "expected" and "actual" would mislead
     * (two paths to one spec, neither of them the truth): the differential
     * check names them "updated to the spec" and "created with the spec".
     */
    readonly sides?: { readonly expected: string; readonly actual: string };
  }[];
  /** Anything else worth showing (identities, a fault's proof that it acted). */
  readonly notes?: readonly string[];
  /** The last lines of the operator's log. */
  readonly operatorLog?: readonly string[];
}

export interface ScenarioReport {
  /** Stable within its check, e.g. "Service/web spec.selector". */
  readonly target: string;
  readonly status: Status;
  /** One sentence: what passed, or what went wrong. */
  readonly message: string;
  readonly durationMs: number;
  readonly evidence?: Evidence;
  /** Set when a waiver turned this scenario's failure into `waived`. */
  readonly waived?: WaiverMark;
  /** For a scenario that did not pass: the command that runs it again alone, keeping its cluster. */
  readonly rerun?: string;
}

export interface CheckReport {
  /** Stable id, e.g. "status-stability/no-avoidable-writes". */
  readonly id: string;
  readonly level: Level;
  readonly status: Status;
  readonly durationMs: number;
  /** Documentation of the check: what it does, why, how to fix. */
  readonly docs: string;
  readonly scenarios: readonly ScenarioReport[];
  /**
   * In a sharded run (`--shard i/n`): the targets of this check's scenarios
   * that are other shards' to run. `merge` checks that some shard ran each.
   */
  readonly elsewhere?: readonly string[];
}

export interface RunReport {
  readonly apiVersion: "reconcile-conformance.dev/v1alpha1";
  readonly kind: "Report";
  readonly status: Status;
  readonly strict: boolean;
  readonly startedAt: string;
  readonly durationMs: number;
  /** The contract file: relative to where the run started when it lies under it, else absolute. */
  readonly contract: string;
  /** Where it ran; a merged report names the cluster of every shard, comma-separated. */
  readonly cluster: { readonly provider: string; readonly name?: string };
  /** Present when the run was one job's share (`--shard i/n`); absent for a whole or merged run. */
  readonly shard?: { readonly index: number; readonly count: number };
  readonly checks: readonly CheckReport[];
  /**
   * What a reader must know before the verdicts (the operator acts on a
   * clock of its own; no check judged any child), said once: at the top of
   * the console summary and of the job summary. Absent when there is none.
   */
  readonly notices?: readonly string[];
  /** The contract's waivers and what became of each (absent when it has none). */
  readonly waivers?: readonly WaiverReport[];
  /** What spec exploration made up, chose and dropped (absent when it did not run). */
  readonly exploration?: ExplorationReport;
  /**
   * Where the checks' `docs` paths are published, when the run knew (the Action: the kit's
   * repository at the version that ran); a merge of shards links to the same place.
   */
  readonly docsBaseUrl?: string;
}

/** Spec exploration in a run: the updates made up from the CRD's schema (docs/checks/differential/update-equals-creation.md). */
export interface ExplorationReport {
  /** The budget: at most this many generated updates. */
  readonly max: number;
  /** The seed that ordered candidates of equal rank: the same seed makes the same choice. */
  readonly seed: number;
  /** How many changes the schema allowed and the API server was asked about. */
  readonly candidates: number;
  /** The generated updates, as verdicts name them: "generated update 3 (spec.port: 9090 → 9091)". */
  readonly chosen: readonly string[];
  /** Candidates dropped: refused in the dry run (with the server's reason), or changing nothing it keeps. */
  readonly refused: readonly { readonly update: string; readonly reason: string }[];
  /** Fields the kit made no change of, and why (a pattern, a format, an image reference). */
  readonly leftAlone: readonly { readonly field: string; readonly why: string }[];
  /** Accepted without every webhook's word (one takes no dry run): their writes tell. */
  readonly unchecked?: readonly string[];
  /** Set when the API server refused the spec exploration starts from: nothing was made up. */
  readonly baseRefused?: string;
  /**
   * Fields whose generated update changed nothing in any child or in the
   * status, against the reference it started from (a note, not a verdict:
   * a field may be meant for later, or only for the operand).
   */
  readonly noEffect?: readonly string[];
}

/** A field diff in words: "expected 1, got 2", or with its sides named, "updated to the spec: 1; created with the spec: 2". */
export function diffText(
  diff: NonNullable<Evidence["diffs"]>[number],
  value: (v: unknown) => string = (v) => JSON.stringify(v) ?? "undefined",
): string {
  const { sides } = diff;
  return sides
    ? `${sides.expected}: ${value(diff.expected)}; ${sides.actual}: ${value(diff.actual)}`
    : `expected ${value(diff.expected)}, got ${value(diff.actual)}`;
}

/** Most severe first: what a set of verdicts is worth, and which of two verdicts on one target wins a merge. */
export const SEVERITY: readonly Status[] = [
  "failed",
  "inconclusive",
  "warned",
  "waived",
  "passed",
  "skipped",
];

/**
 * The status of a set of results: the most severe, where failed > inconclusive
 * > warned > waived > passed > skipped; skipped only when every one was
 * skipped (or there were none).
 */
export function deriveStatus(statuses: readonly Status[]): Status {
  for (const status of SEVERITY) if (statuses.includes(status)) return status;
  return "skipped";
}

/** A SHOULD check's failure is a warning unless the run is strict. */
export function levelled(status: Status, level: Level, strict: boolean): Status {
  return status === "failed" && level === "SHOULD" && !strict ? "warned" : status;
}

export function checkReport(
  check: { readonly id: string; readonly level: Level },
  scenarios: readonly ScenarioReport[],
  options: {
    readonly strict: boolean;
    readonly durationMs: number;
    /** Targets left to other shards. */
    readonly elsewhere?: readonly string[];
  },
): CheckReport {
  const elsewhere = options.elsewhere ?? [];
  // Every judged check has at least one scenario (a skip carries its reason): none at all is a
  // suite that forgot the check, which must show, never pass as a silent skip. A check whose
  // scenarios are all other shards' has none here, and is skipped in this shard's report.
  const judged: readonly ScenarioReport[] =
    scenarios.length > 0 || elsewhere.length > 0
      ? scenarios
      : [
          {
            target: "suite",
            status: "inconclusive",
            message: "the suite gave no verdict for this check: a defect of the kit, not of the operator",
            durationMs: 0,
          },
        ];
  const levelledScenarios = judged.map((s) => ({
    ...s,
    status: levelled(s.status, check.level, options.strict),
  }));
  return {
    id: check.id,
    level: check.level,
    status: deriveStatus(levelledScenarios.map((s) => s.status)),
    durationMs: options.durationMs,
    docs: `docs/checks/${check.id}.md`,
    scenarios: levelledScenarios,
    ...(elsewhere.length > 0 ? { elsewhere } : {}),
  };
}

/**
 * Exit code of a run: 0 passed, warned or waived; 1 a check failed (or a
 * waiver expired); 3 inconclusive (and nothing failed).
 */
export function exitCodeOfReport(report: Pick<RunReport, "status">): 0 | 1 | 3 {
  if (report.status === "failed") return 1;
  if (report.status === "inconclusive") return 3;
  return 0;
}
