import type { CheckReport, Evidence, RunReport, ScenarioReport } from "../../src/report/report-model.js";

export interface ReportFixtureOptions {
  /** Every check's durationMs (default 1). */
  readonly checkMs?: number;
  /** Every scenario's durationMs (default 1). */
  readonly scenarioMs?: number;
  /** The run's fields other than its checks; default: a failed, not strict run of 1 ms on kwok. */
  readonly run?: Partial<Omit<RunReport, "checks">>;
}

/**
 * Builders of a report, its checks and their scenarios for a renderer's tests.
 * The durations and run fields are the test's own: the renderers print them.
 */
export function reportFixture({ checkMs = 1, scenarioMs = 1, run = {} }: ReportFixtureOptions = {}) {
  /** A check whose docs are at docs/checks/<id>.md. */
  function check(
    id: string,
    level: CheckReport["level"],
    status: CheckReport["status"],
    scenarios: ScenarioReport[],
  ): CheckReport {
    return { id, level, status, durationMs: checkMs, docs: `docs/checks/${id}.md`, scenarios };
  }

  function scenario(
    target: string,
    status: ScenarioReport["status"],
    message: string,
    evidence?: Evidence,
  ): ScenarioReport {
    return { target, status, message, durationMs: scenarioMs, ...(evidence ? { evidence } : {}) };
  }

  function runReport(checks: CheckReport[]): RunReport {
    return {
      apiVersion: "reconcile-conformance.dev/v1alpha1",
      kind: "Report",
      status: "failed",
      strict: false,
      startedAt: "2025-06-01T10:00:00.000Z",
      durationMs: 1,
      contract: "reconcile-conformance.yaml",
      cluster: { provider: "kwok" },
      ...run,
      checks,
    };
  }

  return { check, scenario, runReport };
}
