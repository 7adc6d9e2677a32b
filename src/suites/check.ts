import { describeError } from "../errors.js";
import type { Evidence, Level, ScenarioReport, Status } from "../report/report-model.js";
import { Inconclusive, Scenario, type ScenarioDeps } from "../runner/scenario.js";
import { inShard, scenarioKey, type Shard } from "../runner/shard.js";
import type { SpecReference, SpecReferences } from "../runner/spec-references.js";
import type { Clock } from "../util/clock.js";

/** A check of the catalogue (DESIGN.md section 3): its stable id, suite and level. */
export interface CheckDefinition {
  /** e.g. "status-stability/no-avoidable-writes"; also its JUnit test case and docs/checks/<id>.md. */
  readonly id: string;
  readonly level: Level;
  /** One line: what it asserts. */
  readonly summary: string;
}

/** One scenario's verdict for one check. */
export interface ScenarioResult extends ScenarioReport {
  readonly check: string;
  /** Not run here: another shard's scenario (the runner lists it in the check's report as such). */
  readonly elsewhere?: true;
  /** Not run: not the scenario `--scenario` asked for (left out of the report). */
  readonly unselected?: true;
}

export interface SuiteContext {
  readonly deps: ScenarioDeps;
  /** The run's reference state per spec, shared by every suite. */
  readonly references: SpecReferences;
  readonly clock: Clock;
  /** Reports a step of a long scenario (shown as progress). */
  readonly progress: (line: string) => void;
  /**
   * Runs one task per item, side by side as far as the run allows (one at a
   * time unless the operator is namespaced and --parallel says more), and
   * returns the results in the items' order: a scenario's verdict never
   * depends on which finished first. A task must not ask for a reference
   * state that is not computed yet: that takes a slot too. Ask first, then
   * fan out.
   */
  sideBySide<T, R>(items: readonly T[], task: (item: T) => Promise<R>): Promise<R[]>;
  /** This job's share of the scenarios (`--shard`); the whole run unless sharded. */
  readonly shard: Shard;
  /** The one scenario to run (`--scenario`, "<check id>#<target>"); every one when absent. */
  readonly only?: string;
}

/**
 * A suite: the checks it can judge, and a run that judges the selected ones
 * (several checks may share one scenario's stimuli).
 */
export interface Suite {
  readonly name: string;
  readonly checks: readonly CheckDefinition[];
  /** The specs whose reference states the selected checks will ask for (computed ahead, side by side). */
  referencesNeeded?(selected: ReadonlySet<string>, updates: number): number[];
  run(context: SuiteContext, selected: ReadonlySet<string>): Promise<ScenarioResult[]>;
}

/** A check with nothing to judge here, and why: the reason is its verdict's message. */
export function skippedResult(check: string, target: string, message: string): ScenarioResult {
  return { check, target, status: "skipped", message, durationMs: 0 };
}

/** The same verdict for every selected check of a scenario that could not reach its judgement. */
export function inconclusiveFor(
  checks: readonly CheckDefinition[],
  selected: ReadonlySet<string>,
  target: string,
  message: string,
  durationMs: number,
  notes: readonly string[] = [],
): ScenarioResult[] {
  return checks
    .filter((c) => selected.has(c.id))
    .map((c) => ({
      check: c.id,
      target,
      status: "inconclusive" as const,
      message,
      durationMs,
      ...(notes.length > 0 ? { evidence: { notes } } : {}),
    }));
}

/** Makes one scenario's verdicts: the check, the target and the start time fixed. */
export type Verdict = ((status: Status, message: string, evidence?: Evidence) => ScenarioResult) & {
  readonly check: string;
  readonly target: string;
};

export function verdictFor(check: CheckDefinition, target: string, clock: Clock): Verdict {
  const started = clock.now();
  const verdict = (status: Status, message: string, evidence?: Evidence): ScenarioResult => ({
    check: check.id,
    target,
    status,
    message,
    durationMs: clock.now() - started,
    ...(evidence ? { evidence } : {}),
  });
  return Object.assign(verdict, { check: check.id, target });
}

/**
 * Whether the scenario judged under `check` and `target` is this shard's
 * (and the one `--scenario` asked for, if any); when not, the placeholder
 * results for `checks` that say so.
 */
export function otherShards(
  context: SuiteContext,
  check: string,
  target: string,
  checks: readonly string[] = [check],
): ScenarioResult[] | undefined {
  if (context.only !== undefined && !checks.some((id) => scenarioKey(id, target) === context.only)) {
    return checks.map((id) => ({
      check: id,
      target,
      status: "skipped" as const,
      message: "not the scenario asked for",
      durationMs: 0,
      unselected: true as const,
    }));
  }
  if (inShard(context.shard, scenarioKey(check, target))) return undefined;
  return checks.map((id) => ({
    check: id,
    target,
    status: "skipped" as const,
    message: "another shard's scenario",
    durationMs: 0,
    elsewhere: true as const,
  }));
}

/**
 * The verdict of a scenario that threw: Inconclusive says why (with its
 * notes); anything else but an abort is a scenario that could not run, which
 * is inconclusive too. An abort (Ctrl-C) goes on up.
 */
export function verdictOfError(error: unknown, signal: AbortSignal, verdict: Verdict): ScenarioResult {
  if (error instanceof Inconclusive) {
    return verdict(
      "inconclusive",
      error.message,
      error.notes.length > 0 ? { notes: [...error.notes] } : undefined,
    );
  }
  if (signal.aborted) throw error;
  return verdict("inconclusive", `the scenario could not run: ${describeError(error)}`);
}

/**
 * Opens a scenario, runs `body` in it and closes it whatever happened; what
 * `body` throws becomes the verdict `verdictOfError` makes of it. Another
 * shard's scenario is not opened at all.
 */
export async function inScenario(
  context: SuiteContext,
  name: string,
  verdict: Verdict,
  body: (scenario: Scenario) => Promise<ScenarioResult>,
): Promise<ScenarioResult> {
  const elsewhere = otherShards(context, verdict.check, verdict.target)?.[0];
  if (elsewhere) return elsewhere;
  let scenario: Scenario | undefined;
  try {
    scenario = await Scenario.open(name, context.deps);
    return await body(scenario);
  } catch (error) {
    return verdictOfError(error, context.deps.signal, verdict);
  } finally {
    await scenario?.close();
  }
}

/**
 * Runs `body` with the reference state of `spec`; when it could not be
 * computed, every selected one of `checks` is inconclusive instead.
 */
export async function withReference(
  context: SuiteContext,
  spec: number,
  checks: readonly CheckDefinition[],
  selected: ReadonlySet<string>,
  body: (reference: SpecReference) => Promise<ScenarioResult[]>,
): Promise<ScenarioResult[]> {
  const started = context.clock.now();
  let reference: SpecReference;
  try {
    reference = await context.references.forSpec(spec, context.progress);
  } catch (error) {
    return withoutReference(error, checks, selected, context.clock.now() - started);
  }
  return body(reference);
}

/** The same inconclusive verdict for every selected check whose reference state could not be computed. */
export function withoutReference(
  error: unknown,
  checks: readonly CheckDefinition[],
  selected: ReadonlySet<string>,
  durationMs: number,
): ScenarioResult[] {
  const message =
    error instanceof Inconclusive
      ? error.message
      : `the reference state could not be computed: ${describeError(error)}`;
  return inconclusiveFor(
    checks,
    selected,
    "reference state",
    message,
    durationMs,
    error instanceof Inconclusive ? error.notes : [],
  );
}
