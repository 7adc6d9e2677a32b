import type { Waiver } from "../contract/load-contract.js";
import { globMatches } from "../contract/promises.js";
import { deriveStatus, type CheckReport, type ScenarioReport, type Status } from "./report-model.js";

/**
 * Waivers: known failures a contract accepts for now, each with a reason.
 * A waived scenario keeps its verdict's message and evidence and shows as
 * `waived`, which does not fail the run; every waiver is reported with what
 * became of it, so nothing is dropped silently:
 * - applied: it waived these scenarios;
 * - stale: its check ran and nothing it names failed: remove it;
 * - expired: its `until` date has passed: it waives nothing and fails the run;
 * - not-run: its check did not run here (or, in a shard, some scenarios it
 *   names ran in other shards).
 * Pure.
 */

export type WaiverOutcome = "applied" | "stale" | "expired" | "not-run";

/** A waived scenario's mark: which waiver, and what the verdict was. */
export interface WaiverMark {
  readonly rule: string;
  readonly reason: string;
  readonly until?: string;
  readonly was: "failed" | "warned";
}

export interface WaiverReport extends Waiver {
  readonly outcome: WaiverOutcome;
  /** The targets of the scenarios it waived. */
  readonly waived: readonly string[];
  /** One sentence for a person. */
  readonly message: string;
}

/** "waived by waivers[0] (until 2026-12-31; was failed): the fix ships in 2.4" */
export function waivedText(mark: WaiverMark): string {
  return `waived by ${mark.rule} (${mark.until ? `until ${mark.until}; ` : ""}was ${mark.was}): ${mark.reason}`;
}

/** "2026-11-30" of an ISO time. */
export function dayOf(isoTime: string): string {
  return isoTime.slice(0, 10);
}

/** Past its last day: `until` is the last day (UTC) it holds. */
export function isExpired(waiver: Pick<Waiver, "until">, today: string): boolean {
  return waiver.until !== undefined && waiver.until < today;
}

function covers(waiver: Waiver, check: string, target: string): boolean {
  return waiver.check === check && (waiver.target === undefined || globMatches(waiver.target, target));
}

/**
 * Marks the check's failed and warned scenarios that an unexpired waiver
 * names as waived (the first such waiver in the contract's order), and
 * derives the check's status again.
 */
export function waiveCheck(check: CheckReport, waivers: readonly Waiver[], today: string): CheckReport {
  const live = waivers.filter((w) => w.check === check.id && !isExpired(w, today));
  if (live.length === 0) return check;
  const scenarios = check.scenarios.map((scenario): ScenarioReport => {
    if (scenario.status !== "failed" && scenario.status !== "warned") return scenario;
    const waiver = live.find((w) => covers(w, check.id, scenario.target));
    if (!waiver) return scenario;
    const waived: WaiverMark = {
      rule: waiver.rule,
      reason: waiver.reason,
      ...(waiver.until === undefined ? {} : { until: waiver.until }),
      was: scenario.status,
    };
    return { ...scenario, status: "waived", waived };
  });
  return { ...check, scenarios, status: deriveStatus(scenarios.map((s) => s.status)) };
}

/** What became of each waiver, over the checks after waiveCheck. */
export function waiverOutcomes(
  checks: readonly CheckReport[],
  waivers: readonly Waiver[],
  today: string,
): WaiverReport[] {
  return waivers.map((waiver) => {
    const check = checks.find((c) => c.id === waiver.check);
    const waived = (check?.scenarios ?? [])
      .filter((s) => s.waived?.rule === waiver.rule)
      .map((s) => s.target);
    const named = waiver.target === undefined ? "" : ` (targets "${waiver.target}")`;
    const report = (outcome: WaiverOutcome, message: string): WaiverReport => ({
      ...waiver,
      outcome,
      waived,
      message,
    });
    if (isExpired(waiver, today)) {
      return report(
        "expired",
        `${waiver.rule} for ${waiver.check}${named} expired on ${waiver.until ?? "?"}: it waives nothing and fails the run; fix the failure, or renew the waiver with a new date and reason ("${waiver.reason}")`,
      );
    }
    if (waived.length > 0) {
      return report(
        "applied",
        `${waiver.rule} waived ${waived.length} failure(s) of ${waiver.check}: ${waiver.reason}`,
      );
    }
    // In a shard, what it names may have run in another: only the merged report can call it stale.
    const elsewhere = check?.elsewhere?.some((t) => covers(waiver, check.id, t)) ?? false;
    if (!check || elsewhere) {
      return report(
        "not-run",
        `${waiver.rule} for ${waiver.check}${named}: ${check ? "scenarios it names ran in other shards: the merged report tells whether it is stale" : "the check did not run"}`,
      );
    }
    const shadowing = check.scenarios
      .filter((s) => s.waived && covers(waiver, check.id, s.target))
      .map((s) => s.waived?.rule ?? "");
    if (shadowing.length > 0) {
      return report(
        "stale",
        `${waiver.rule} for ${waiver.check}${named} waived nothing: ${[...new Set(shadowing)].join(", ")}, earlier in the contract, waived the failures it names; remove it, or merge the two`,
      );
    }
    const seen = check.scenarios.filter((s) => covers(waiver, check.id, s.target)).map((s) => s.status);
    const verdicts =
      seen.length === 0
        ? "no scenario of the check has such a target"
        : `its scenarios: ${[...new Set(seen)].join(", ")}`;
    return report(
      "stale",
      `${waiver.rule} for ${waiver.check}${named} matched no failure (${verdicts}): remove it, or narrow it to what still fails`,
    );
  });
}

/** The run's status: its checks', and failed when a waiver expired. */
export function runStatus(checks: readonly CheckReport[], waivers: readonly WaiverReport[]): Status {
  return deriveStatus([
    ...checks.map((c) => c.status),
    ...(waivers.some((w) => w.outcome === "expired") ? (["failed"] as const) : []),
  ]);
}
