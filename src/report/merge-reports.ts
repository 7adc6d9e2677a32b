import type { Waiver } from "../contract/load-contract.js";
import { dayOf, isExpired, runStatus, waiverOutcomes } from "./waivers.js";
import { readFile } from "node:fs/promises";
import { UsageError } from "../errors.js";
import { isRecord } from "../util/records.js";
import {
  deriveStatus,
  SEVERITY,
  type CheckReport,
  type RunReport,
  type ScenarioReport,
} from "./report-model.js";

/** A shard's report and the file it came from (for errors that name it). */
export interface ShardReport {
  readonly file: string;
  readonly report: RunReport;
}

/** Reads a report.json, refusing anything that is not one with the file named. */
export async function readReport(file: string): Promise<ShardReport> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new UsageError(
      "merge/unreadable",
      `${file}: not a readable JSON report: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (
    !isRecord(value) ||
    value.apiVersion !== "reconcile-conformance.dev/v1alpha1" ||
    value.kind !== "Report" ||
    !Array.isArray(value.checks)
  ) {
    throw new UsageError(
      "merge/not-a-report",
      `${file}: not a reconcile-conformance report (expected apiVersion reconcile-conformance.dev/v1alpha1, kind Report)`,
    );
  }
  return { file, report: value as unknown as RunReport };
}

/**
 * Joins the reports of the shards of one run into the report of the whole
 * run. The shards must be all of one split (every i of i/n exactly once)
 * and of one strictness; reports of unsharded runs are refused, since two
 * whole runs are not parts of one. A scenario every shard ran (the cluster
 * sanity check, verdicts given without a scenario such as a skipped check)
 * appears once, with the most severe verdict the shards gave it. A target
 * a shard left to the others that no shard ran becomes an inconclusive
 * scenario saying so: the shards derived different targets (a reference
 * write sequence that depends on timing), and nothing is silently lost.
 */
export function mergeReports(shards: readonly ShardReport[]): RunReport {
  const [first] = shards;
  if (!first) throw new UsageError("merge/nothing", "merge: give the report.json of every shard");
  const count = first.report.shard?.count;
  for (const { file, report } of shards) {
    if (!report.shard) {
      throw new UsageError(
        "merge/not-a-shard",
        `${file}: the report of a whole run, not of a shard (run with --shard i/n to split a run)`,
      );
    }
    if (report.shard.count !== count) {
      throw new UsageError(
        "merge/mixed-splits",
        `${file}: shard ${report.shard.index}/${report.shard.count}, but ${first.file} is shard ${first.report.shard?.index}/${count}: the shards of one run share one n`,
      );
    }
    if (report.strict !== first.report.strict) {
      throw new UsageError(
        "merge/mixed-strictness",
        `${file}: strict is ${report.strict}, but ${first.file} has strict ${first.report.strict}: merge shards of one run`,
      );
    }
  }
  const byIndex = new Map<number, string>();
  for (const { file, report } of shards) {
    const index = report.shard?.index ?? 0;
    const seen = byIndex.get(index);
    if (seen) {
      throw new UsageError("merge/duplicate-shard", `${file} and ${seen} are both shard ${index}/${count}`);
    }
    byIndex.set(index, file);
  }
  const missing = Array.from({ length: count ?? 0 }, (_, i) => i + 1).filter((i) => !byIndex.has(i));
  if (missing.length > 0) {
    throw new UsageError(
      "merge/missing-shard",
      `merge: shard(s) ${missing.map((i) => `${i}/${count}`).join(", ")} missing: a merged verdict needs every shard`,
    );
  }

  const checks: CheckReport[] = [];
  for (const id of unique(shards.flatMap((s) => s.report.checks.map((c) => c.id)))) {
    const parts = shards.flatMap((s) => s.report.checks.filter((c) => c.id === id));
    const [head] = parts;
    if (!head) continue;
    const scenarios = new Map<string, ScenarioReport>();
    for (const scenario of parts.flatMap((c) => c.scenarios)) {
      const known = scenarios.get(scenario.target);
      if (!known || SEVERITY.indexOf(scenario.status) < SEVERITY.indexOf(known.status)) {
        scenarios.set(scenario.target, scenario);
      }
    }
    for (const target of unique(parts.flatMap((c) => c.elsewhere ?? []))) {
      if (scenarios.has(target)) continue;
      scenarios.set(target, {
        target,
        status: "inconclusive",
        message: `shard(s) ${shards
          .filter(({ report }) => report.checks.some((c) => c.id === id && c.elsewhere?.includes(target)))
          .map(({ report }) => `${report.shard?.index}/${report.shard?.count}`)
          .join(
            ", ",
          )} left this scenario to the others, and none ran it: the shards derived different targets (a reference run that differed), or the one it belongs to could not compute its reference or did not select the check`,
        durationMs: 0,
      });
    }
    const merged = [...scenarios.values()];
    checks.push({
      id,
      level: head.level,
      status: deriveStatus(merged.map((s) => s.status)),
      durationMs: Math.max(...parts.map((c) => c.durationMs)),
      docs: head.docs,
      scenarios: merged,
    });
  }
  const reports = shards.map((s) => s.report);
  const startedAt = reports.map((r) => r.startedAt).sort()[0] ?? first.report.startedAt;
  // What became of each waiver, over the merged checks: a waiver stale in one shard may have
  // waived a failure in another. Expired as of the latest shard's day, as that shard judged it.
  const definitions: Waiver[] = (first.report.waivers ?? []).map(
    ({ outcome: _outcome, waived: _waived, message: _message, ...waiver }) => waiver,
  );
  const latestDay = dayOf(
    reports
      .map((r) => r.startedAt)
      .sort()
      .at(-1) ?? startedAt,
  );
  // A shard that ran on an earlier day may have applied a waiver that has expired by the latest
  // one: its scenarios get their verdicts back, as the expired waiver's report says.
  const expired = new Set(definitions.filter((w) => isExpired(w, latestDay)).map((w) => w.rule));
  for (const [index, check] of checks.entries()) {
    if (!check.scenarios.some((s) => s.waived && expired.has(s.waived.rule))) continue;
    const scenarios = check.scenarios.map((s) => {
      if (!s.waived || !expired.has(s.waived.rule)) return s;
      const { waived, ...verdict } = s;
      return { ...verdict, status: waived.was };
    });
    checks[index] = { ...check, scenarios, status: deriveStatus(scenarios.map((s) => s.status)) };
  }
  const waivers = waiverOutcomes(checks, definitions, latestDay);
  // Every shard computed its own references: each kind of notice (what precedes its first colon)
  // once, as the first shard that has it says it.
  const notices = reports
    .flatMap((r) => r.notices ?? [])
    .filter((notice, i, all) => all.findIndex((n) => n.split(":")[0] === notice.split(":")[0]) === i);
  return {
    apiVersion: "reconcile-conformance.dev/v1alpha1",
    kind: "Report",
    status: runStatus(checks, waivers),
    strict: first.report.strict,
    startedAt,
    // The jobs of a matrix run side by side: the whole run took as long as its longest shard.
    durationMs: Math.max(...reports.map((r) => r.durationMs)),
    contract: first.report.contract,
    cluster: mergedCluster(reports.map((r) => r.cluster)),
    checks,
    ...(notices.length > 0 ? { notices } : {}),
    ...(waivers.length > 0 ? { waivers } : {}),
    // Every shard explored alike (the same budget and seed choose the same updates): the first says it.
    ...(first.report.exploration ? { exploration: first.report.exploration } : {}),
    ...(first.report.docsBaseUrl === undefined ? {} : { docsBaseUrl: first.report.docsBaseUrl }),
  };
}

/** Each shard ran in a cluster of its own: name them all (one provider each, or all of them). */
function mergedCluster(clusters: readonly RunReport["cluster"][]): RunReport["cluster"] {
  const provider = unique(clusters.map((c) => c.provider)).join(", ");
  const names = unique(clusters.map((c) => c.name).filter((n): n is string => n !== undefined));
  return names.length === 0 ? { provider } : { provider, name: names.join(", ") };
}

function unique<T>(items: readonly T[]): T[] {
  return [...new Set(items)];
}
