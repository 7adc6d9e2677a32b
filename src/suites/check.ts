import type { Contract } from "../contract/load-contract.js";
import type { Evidence, Level, Status } from "../report/report-model.js";
import type { Scenario, ScenarioDeps } from "../scenario/scenario.js";
import type { SpecReference } from "../scenario/spec-references.js";
import type { Clock } from "../util/clock.js";
import type { SuiteName } from "./suite-names.js";

/**
 * How a check is written: declared, never hand-run. A check names what it
 * needs (reference states, targets), observes one scenario per target
 * (stimuli, faults, waits: all the I/O) into a plain, serialisable
 * observation, and judges that observation with a pure function. The one
 * generic runner (src/runner/suite-runner.ts) does everything else once:
 * selection, skips, references, shards, `--scenario`, side-by-side fan-out,
 * and the inconclusive verdict of a scenario that could not reach its
 * judgement. Adding a check: docs/design/architecture.md, "Adding a check".
 */

/** A check of the catalogue: its stable id, level and one-line summary. */
export interface CheckDefinition {
  /** "<suite>/<name>", e.g. "drift/deleted-child"; its file is src/suites/<id>.ts, its docs docs/checks/<id>.md. */
  readonly id: string;
  readonly level: Level;
  /** One line: what it asserts. */
  readonly summary: string;
}

/** A verdict as a judge gives it; the runner adds the check, the target and the time. */
export interface Judgement {
  readonly status: Status;
  /** One sentence: what passed, or what went wrong. */
  readonly message: string;
  readonly evidence?: Evidence;
  /**
   * For an inconclusive judgement only: why a second attempt of the
   * scenario may decide where this one could not (a race the evidence
   * cannot tell apart, which a new attempt may not meet). The runner then
   * observes the scenario once more, in a new namespace, and its verdicts
   * stand on their own evidence, with this attempt's in their notes.
   */
  readonly attemptAgain?: string;
}

/** Nothing to judge (for the whole check, or none of its targets), and why: a skipped verdict. */
export interface Skip {
  /** The verdict's target ("contract", "children", "write sequence"). */
  readonly target: string;
  /** Why: the verdict's message. */
  readonly skip: string;
}

/** What a check's targets are chosen from. */
export interface TargetContext {
  readonly contract: Contract;
  /** The reference states the check asked for, by spec. */
  readonly references: ReadonlyMap<number, SpecReference>;
}

/** What an observer has to work with, for one scenario. */
export interface ObserveContext<Phase extends string = never> extends TargetContext {
  readonly deps: ScenarioDeps;
  readonly clock: Clock;
  /** Reports a step of the scenario (shown as progress). */
  progress(line: string): void;
  /** Opens the scenario's world (namespace, proxy, operator); the runner closes it, whatever happens. */
  open(): Promise<Scenario>;
  /** The optional phases the selected checks that share this scenario need. */
  readonly phases: ReadonlySet<Phase>;
}

/**
 * The scenario of a check: what the kit does and what it records. Checks
 * that share one observer object judge one scenario per target together
 * (status-stability's four checks judge one restart and its touches).
 */
export interface Observer<Target, Observation, Phase extends string = never> {
  /** Names the scenario's namespace ("drift-field" -> rc-drift-field-1a2b3c). */
  readonly scenario: string;
  /**
   * The name for one target's scenario, when it should tell the targets'
   * namespaces apart (a kept namespace says which scenario it was); default `scenario`.
   */
  scenarioOf?(target: Target): string;
  /**
   * Runs the scenario and returns what was seen, as plain data (JSON):
   * write log entries, fault proofs, end states, the reference's. Throws
   * Inconclusive when the scenario cannot reach the point it observes.
   */
  observe(context: ObserveContext<Phase>, target: Target): Promise<Observation>;
}

/** A check: what it is, what it needs, its scenario and its judge. */
export interface Check<
  Target = unknown,
  Observation = unknown,
  Phase extends string = never,
> extends CheckDefinition {
  /** The specs whose reference states its targets or its judge need (default: none). */
  references?(contract: Contract): readonly number[];
  /** Why the check has nothing to do under this contract, before any reference is computed. */
  skip?(contract: Contract): Skip | undefined;
  /** Its targets, one scenario each; a Skip when there is none. */
  targets(context: TargetContext): readonly Target[] | Skip;
  /** A target's stable name: the verdict's target and, with the check id, the scenario's key. */
  targetName(target: Target): string;
  /** Why one target is skipped, decided before its scenario opens. */
  skipTarget?(target: Target, context: TargetContext): string | undefined;
  readonly observer: Observer<Target, Observation, Phase>;
  /** The optional phases of a shared observer this check needs. */
  readonly needs?: readonly Phase[];
  /**
   * Runs in every job of a sharded run, not in one: each job has a cluster
   * of its own, and the cluster's sanity is what every other check there rests on.
   */
  readonly everyShard?: boolean;
  /** The verdict on one scenario's observation. Pure: no I/O, no clock. */
  judge(observation: Observation, contract: Contract): Judgement;
  /**
   * A verdict from a reference state that could not be computed (an
   * operator that never fell quiet may already show the bug); undefined
   * leaves the check inconclusive. Pure.
   */
  judgeWithoutReference?(error: unknown, contract: Contract): Judgement | undefined;
}

/** A check of any target and observation: what the registry holds. */
// Method syntax makes the members bivariant, so every Check<T, O> is one of these.
export type AnyCheck = Check<unknown, unknown, string>;

/** Declares a check (the identity: it exists for the types). */
export function defineCheck<Target, Observation, Phase extends string = never>(
  check: Check<Target, Observation, Phase>,
): Check<Target, Observation, Phase> {
  return check;
}

/** A suite: a folder of checks, judged in the order listed. */
export interface Suite {
  readonly name: SuiteName;
  /** One line: what the suite is about. */
  readonly summary: string;
  readonly checks: readonly AnyCheck[];
}

/** Declares a suite; its name stays a literal, so the registry can check it against SUITE_NAMES. */
export function defineSuite<Name extends SuiteName>(
  suite: Suite & { readonly name: Name },
): Suite & { readonly name: Name } {
  return suite;
}
