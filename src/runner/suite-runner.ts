import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Contract } from "../contract/load-contract.js";
import { describeError } from "../errors.js";
import { redactSecretBody } from "../proxy/secret-redaction.js";
import type { ScenarioReport } from "../report/report-model.js";
import { Inconclusive, OperatorExited, Scenario, type ScenarioDeps } from "../scenario/scenario.js";
import { fixtureChanges } from "../scenario/fixtures.js";
import type { SpecReference, SpecReferences } from "../scenario/spec-references.js";
import type { AnyCheck, Judgement, Observer, Skip, Suite, TargetContext } from "../suites/check.js";
import { shownValue } from "../suites/shared/drift-targets.js";
import type { Clock } from "../util/clock.js";
import { isRecord } from "../util/records.js";
import { inShard, scenarioKey, type Shard } from "./shard.js";

/** One scenario's verdict for one check. */
export interface ScenarioResult extends ScenarioReport {
  readonly check: string;
  /** Not run here: another shard's scenario (the runner lists it in the check's report as such). */
  readonly elsewhere?: true;
  /** Not run: not the scenario `--scenario` asked for (left out of the report). */
  readonly unselected?: true;
}

/** What a suite's run has from the run. */
export interface SuiteContext {
  readonly deps: ScenarioDeps;
  /** The run's reference state per spec, shared by every suite. */
  readonly references: Pick<SpecReferences, "forSpec">;
  readonly clock: Clock;
  /** Reports a step of a long scenario (shown as progress). */
  readonly progress: (line: string) => void;
  /**
   * Runs one task per item, side by side as far as the run allows, and
   * returns the results in the items' order: a verdict never depends on
   * which scenario finished first. A task must not ask for a reference state
   * that is not computed yet (that takes a slot too): ask first, then fan out.
   */
  sideBySide<T, R>(items: readonly T[], task: (item: T) => Promise<R>): Promise<R[]>;
  /** This job's share of the scenarios (`--shard`); the whole run unless sharded. */
  readonly shard: Shard;
  /** The one scenario to run (`--scenario`, "<check id>#<target>"); every one when absent. */
  readonly only?: string;
}

/** The file each scenario's observation and verdicts are written to, in the scenario's folder. */
export const OBSERVATION_FILE = "observation.json";

/** What `observation.json` holds: enough to judge the scenario again without running it. */
export interface RecordedObservation {
  readonly target: string;
  readonly verdicts: readonly { readonly check: string; readonly status: string; readonly message: string }[];
  readonly observation: unknown;
}

/**
 * The specs whose reference states the selected checks will ask for under
 * this contract: computed ahead, side by side, when the run has the slots.
 */
export function referencesNeeded(
  checks: readonly AnyCheck[],
  selected: ReadonlySet<string>,
  contract: Contract,
): number[] {
  const specs = checks
    .filter((c) => selected.has(c.id) && !c.skip?.(contract))
    .flatMap((c) => c.references?.(contract) ?? []);
  return [...new Set(specs)].sort((a, b) => a - b);
}

/** One scenario and the checks that judge it: one check, or several that share an observer. */
interface ScenarioGroup {
  readonly observer: Observer<unknown, unknown, string>;
  readonly target: unknown;
  readonly name: string;
  readonly checks: AnyCheck[];
  readonly references: Map<number, SpecReference>;
}

/** A check's verdicts in order: made already, or the one its scenario group will make. */
type Entry = ScenarioResult | ScenarioGroup;

/**
 * Runs a suite's selected checks: each check's skip, its reference states
 * (asked for before any scenario holds a slot), its targets and their
 * skips, then every scenario of the suite side by side, each judged by
 * every check that shares it. Another shard's scenario, or one
 * `--scenario` did not ask for, is not opened (a placeholder says so). A
 * scenario that throws is inconclusive for every check that judges it; an
 * abort (Ctrl-C) goes on up.
 */
export async function runSuite(
  suite: Suite,
  context: SuiteContext,
  selected: ReadonlySet<string>,
): Promise<ScenarioResult[]> {
  const { contract } = context.deps;
  const checks = suite.checks.filter((c) => selected.has(c.id));
  const started = context.clock.now();
  const elapsed = () => context.clock.now() - started;

  const specs = referencesNeeded(checks, selected, contract);
  const settled = new Map<number, { reference: SpecReference } | { error: unknown }>();
  await Promise.all(
    specs.map(async (spec) => {
      try {
        settled.set(spec, { reference: await context.references.forSpec(spec, context.progress) });
      } catch (error) {
        settled.set(spec, { error });
      }
    }),
  );

  const groups = new Map<string, ScenarioGroup>();
  const seenNames = new Map<string, number>();
  const entries = new Map<AnyCheck, Entry[]>();
  for (const check of checks) {
    const own: Entry[] = [];
    entries.set(check, own);
    const skip = check.skip?.(contract);
    if (skip) {
      own.push(skipped(check.id, skip));
      continue;
    }
    const references = new Map<number, SpecReference>();
    let failure: { error: unknown } | undefined;
    for (const spec of check.references?.(contract) ?? []) {
      const outcome = settled.get(spec);
      if (outcome && "reference" in outcome) references.set(spec, outcome.reference);
      else failure ??= outcome ?? { error: new Error(`no reference state of spec ${spec}`) };
    }
    if (failure) {
      own.push(withoutReference(check, failure.error, contract, elapsed()));
      continue;
    }
    const targetContext: TargetContext = { contract, references };
    const targets = check.targets(targetContext);
    if (isSkip(targets)) {
      own.push(skipped(check.id, targets));
      continue;
    }
    for (const target of targets) {
      const name = check.targetName(target);
      const why = check.skipTarget?.(target, targetContext);
      if (why !== undefined) {
        own.push(skipped(check.id, { target: name, skip: why }));
        continue;
      }
      // Checks that share an observer share the scenario of a target; two targets of one check
      // that happen to have the same name are two scenarios, as they always were.
      const occurrence = (seenNames.get(`${check.id}#${name}`) ?? 0) + 1;
      seenNames.set(`${check.id}#${name}`, occurrence);
      const observerIndex = suite.checks.findIndex((c) => c.observer === check.observer);
      const key = `${observerIndex}#${name}#${occurrence}`;
      const group: ScenarioGroup = groups.get(key) ?? {
        observer: check.observer,
        target,
        name,
        checks: [],
        references: new Map(),
      };
      groups.set(key, group);
      group.checks.push(check);
      for (const [spec, reference] of references) group.references.set(spec, reference);
      own.push(group);
    }
  }

  const verdicts = new Map<ScenarioGroup, ScenarioResult[]>();
  const toRun = [...groups.values()].filter((group) => {
    const placeholders = notHere(suite, group, context);
    if (placeholders) verdicts.set(group, placeholders);
    return !placeholders;
  });
  const judged = await context.sideBySide(toRun, (group) => runScenario(group, context));
  toRun.forEach((group, i) => verdicts.set(group, judged[i] ?? []));

  return checks.flatMap((check) =>
    (entries.get(check) ?? []).flatMap((entry) =>
      "observer" in entry ? (verdicts.get(entry) ?? []).filter((r) => r.check === check.id) : [entry],
    ),
  );
}

function isSkip(targets: readonly unknown[] | Skip): targets is Skip {
  return !Array.isArray(targets);
}

/** A check with nothing to judge here, and why: the reason is its verdict's message. */
export function skipped(check: string, skip: Skip): ScenarioResult {
  return { check, target: skip.target, status: "skipped", message: skip.skip, durationMs: 0 };
}

/**
 * The verdict of a check whose reference state could not be computed: the
 * check's own judgement of the failure, if it has one, else inconclusive
 * (an Inconclusive's message and notes, or what went wrong).
 */
function withoutReference(
  check: AnyCheck,
  error: unknown,
  contract: Contract,
  durationMs: number,
): ScenarioResult {
  const target = "reference state";
  const judged = check.judgeWithoutReference?.(error, contract);
  if (judged) return { check: check.id, target, ...judged, durationMs };
  // The operator died on the way to the reference: a failure of the operator, for every asker.
  if (error instanceof OperatorExited) {
    return {
      check: check.id,
      target,
      status: "failed",
      message: `the reference state could not be computed: ${error.message}`,
      durationMs,
      evidence: { operatorLog: [...error.log] },
    };
  }
  const message =
    error instanceof Inconclusive
      ? error.message
      : `the reference state could not be computed: ${describeError(error)}`;
  const notes = error instanceof Inconclusive ? error.notes : [];
  return {
    check: check.id,
    target,
    status: "inconclusive",
    message,
    durationMs,
    ...(notes.length > 0 ? { evidence: { notes: [...notes] } } : {}),
  };
}

/**
 * The placeholders of a scenario this job does not run: not the one
 * `--scenario` asked for, or another shard's. A shared scenario is assigned
 * under the first check of the suite that observes it, selected or not, so
 * every job assigns it alike.
 */
function notHere(suite: Suite, group: ScenarioGroup, context: SuiteContext): ScenarioResult[] | undefined {
  const placeholder = (check: AnyCheck) => ({
    check: check.id,
    target: group.name,
    status: "skipped" as const,
    durationMs: 0,
  });
  if (
    context.only !== undefined &&
    !group.checks.some((c) => scenarioKey(c.id, group.name) === context.only)
  ) {
    return group.checks.map((c) => ({
      ...placeholder(c),
      message: "not the scenario asked for",
      unselected: true as const,
    }));
  }
  if (group.checks.every((c) => c.everyShard)) return undefined;
  const assignedTo = suite.checks.find((c) => c.observer === group.observer)?.id ?? "";
  if (inShard(context.shard, scenarioKey(assignedTo, group.name))) return undefined;
  return group.checks.map((c) => ({
    ...placeholder(c),
    message: "another shard's scenario",
    elsewhere: true as const,
  }));
}

/**
 * Observes one scenario and judges it with each of its checks. When a
 * check's judgement is inconclusive and says why a second attempt may decide
 * (attemptAgain: a race the evidence cannot tell apart), the scenario is
 * observed once more, in a new namespace: the second attempt's verdicts
 * stand on their own evidence, with the first attempt's in their notes.
 * There is no third.
 */
async function runScenario(group: ScenarioGroup, context: SuiteContext): Promise<ScenarioResult[]> {
  const first = await attemptScenario(group, context);
  const why = first.find((r) => r.status === "inconclusive" && r.attemptAgain !== undefined)?.attemptAgain;
  if (why === undefined) return first.map(withoutAttemptAgain);
  context.progress(`attempting ${group.name} again: the first attempt could not tell`);
  const second = await attemptScenario(group, context);
  return second.map((result) => {
    const before = first.find((r) => r.check === result.check);
    if (!before) return withoutAttemptAgain(result);
    const notes = [
      `a first attempt of this scenario was ${before.status}: ${before.message}; attempted again because ${why}`,
      ...(before.evidence?.notes ?? []).map((note) => `first attempt: ${note}`),
    ];
    const evidence = result.evidence ?? {};
    return withoutAttemptAgain({
      ...result,
      evidence: { ...evidence, notes: [...notes, ...(evidence.notes ?? [])] },
      durationMs: before.durationMs + result.durationMs,
    });
  });
}

/** A verdict as reported: the runner's request for a second attempt is not part of it. */
function withoutAttemptAgain(result: ScenarioResult & Pick<Judgement, "attemptAgain">): ScenarioResult {
  const { attemptAgain: _attemptAgain, ...verdict } = result;
  return verdict;
}

/** Observes one scenario and judges it with each of its checks; the scenario is closed whatever happened. */
async function attemptScenario(
  group: ScenarioGroup,
  context: SuiteContext,
): Promise<(ScenarioResult & Pick<Judgement, "attemptAgain">)[]> {
  const { deps, clock } = context;
  const started = clock.now();
  const verdict = (check: AnyCheck, judgement: Judgement): ScenarioResult => ({
    check: check.id,
    target: group.name,
    ...judgement,
    durationMs: clock.now() - started,
  });
  let scenario: Scenario | undefined;
  let opening: Promise<Scenario> | undefined;
  try {
    const observation = await group.observer.observe(
      {
        deps,
        contract: deps.contract,
        clock,
        references: group.references,
        progress: context.progress,
        phases: new Set(group.checks.flatMap((c) => c.needs ?? [])),
        open: () =>
          (opening ??= Scenario.open(
            group.observer.scenarioOf?.(group.target) ?? group.observer.scenario,
            deps,
          ).then((opened) => (scenario = opened))),
      },
      group.target,
    );
    const notes = scenario ? scenarioNotes(scenario, deps) : [];
    const results = group.checks.map((check) =>
      verdict(check, withNotes(check.judge(observation, deps.contract), notes)),
    );
    // A check that needs no scenario (the cluster's) records beside the suite's scenarios.
    const folder = scenario?.workDir ?? join(deps.workDir, group.observer.scenario);
    await record(folder, group.name, observation, results, deps);
    return results;
  } catch (error) {
    if (error instanceof OperatorExited) {
      return group.checks.map((check) =>
        verdict(check, {
          status: "failed",
          message: error.message,
          evidence: { operatorLog: [...error.log] },
        }),
      );
    }
    if (error instanceof Inconclusive) {
      const all = [...error.notes, ...(scenario ? scenarioNotes(scenario, deps) : [])];
      const notes = all.length > 0 ? { evidence: { notes: all } } : {};
      return group.checks.map((check) =>
        verdict(check, { status: "inconclusive", message: error.message, ...notes }),
      );
    }
    if (deps.signal.aborted) throw error;
    const notes = scenario ? await scenario.operatorLogNotes().catch(() => []) : [];
    return group.checks.map((check) =>
      verdict(check, {
        status: "inconclusive",
        message: `the scenario could not run: ${describeError(error)}`,
        ...(notes.length > 0 ? { evidence: { notes } } : {}),
      }),
    );
  } finally {
    // A scenario still opening when the observer threw is closed once it is open.
    await (opening ? opening.then((s) => s.close()).catch(() => undefined) : undefined);
  }
}

/** The operator's writes to the contract's fixtures in this scenario, as notes (fixtures.ts). */
function touchedFixtures(scenario: Scenario, deps: ScenarioDeps): string[] {
  if (!deps.fixtures?.length) return [];
  return fixtureChanges(
    scenario.proxy.writeLog.query({ actor: "operator" }),
    deps.fixtures,
    scenario.namespace,
  );
}

/**
 * The notes every verdict of a scenario carries: the fixtures the operator
 * changed, and which evidence decided that it was done in each wait (quiescence.ts).
 */
function scenarioNotes(scenario: Scenario, deps: ScenarioDeps): string[] {
  const quiescence = scenario.quiescence.note();
  return [...touchedFixtures(scenario, deps), ...(quiescence === undefined ? [] : [quiescence])];
}

/** A judgement with more notes in its evidence. */
function withNotes(judgement: Judgement, notes: readonly string[]): Judgement {
  if (notes.length === 0) return judgement;
  const evidence = judgement.evidence ?? {};
  return { ...judgement, evidence: { ...evidence, notes: [...(evidence.notes ?? []), ...notes] } };
}

/** Writes a scenario's observation and verdicts beside its logs (Secret values as hashes), to judge it again later. */
async function record(
  workDir: string,
  target: string,
  observation: unknown,
  results: readonly ScenarioResult[],
  deps: ScenarioDeps,
): Promise<void> {
  const recorded: RecordedObservation = {
    target,
    verdicts: results.map((r) => ({ check: r.check, status: r.status, message: r.message })),
    observation: withoutSecretValues(observation),
  };
  try {
    await mkdir(workDir, { recursive: true });
    await writeFile(join(workDir, OBSERVATION_FILE), `${JSON.stringify(recorded, null, 1)}\n`);
  } catch (error) {
    // The verdicts stand without it: it is for judging them again later.
    deps.logger.warn(`could not record the observation of ${target}: ${describeError(error)}`);
  }
}

/** A copy of `value` in which every Secret object's values are hashes (secret-redaction.ts). */
function withoutSecretValues(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecretValues);
  if (!isRecord(value)) return value;
  const copy = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutSecretValues(v)]));
  if (copy.kind === "Secret" && copy.apiVersion === "v1") {
    return redactSecretBody({ group: "", resource: "secrets" }, copy);
  }
  // A drift target of a Secret's data (kind, path, value, perturbed) carries the value itself.
  if (copy.kind === "Secret" && Array.isArray(copy.path)) {
    const path = copy.path.filter(
      (p): p is string | number => typeof p === "string" || typeof p === "number",
    );
    return {
      ...copy,
      ...("value" in copy ? { value: shownValue("Secret", path, copy.value) } : {}),
      ...("perturbed" in copy ? { perturbed: shownValue("Secret", path, copy.perturbed) } : {}),
    };
  }
  return copy;
}
