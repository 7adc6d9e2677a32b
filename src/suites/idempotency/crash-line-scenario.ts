import { forWantOfChildren } from "../shared/no-children.js";
import type { Contract } from "../../contract/load-contract.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import type { ChildRoles } from "../../scenario/child-roles.js";
import { liveChildObjects, writeEvidence, type LiveChild } from "../../scenario/reference-state.js";
import type { ReferenceChild } from "../../scenario/spec-references.js";
import type { Judgement, Observer, Skip, TargetContext } from "../check.js";
import {
  assertFindable,
  crashAtLine,
  crashLines,
  missedCrash,
  type CrashLine,
  type CrashOutcome,
} from "../shared/crash-lines.js";
import { compareAfterFault, unsureAfterFault } from "../shared/after-fault.js";
import { describeMismatch, endStateMatches } from "../shared/end-state.js";
import { identityLosses } from "../shared/identity-losses.js";
import { ObjectKinds } from "../shared/promised.js";
import {
  faultedSpecs,
  keptThroughUpdate,
  updatePathLines,
  walkToUpdate,
  type FaultPath,
} from "../shared/update-paths.js";

// The crash-line sweep, shared by idempotency/crash-after-create and
// idempotency/crash-after-write (not a check itself).

/** One crash line, with the end state the restarted operator must reach. */
export interface CrashLineTarget {
  readonly line: CrashLine;
  /** The children of the reference of the spec the line's path ends on (spec 0's for the sample's creation). */
  readonly reference: readonly ReferenceChild[];
  /** Which child is which across lives (the reference's roles). */
  readonly roles?: ChildRoles;
  /** The update whose way the line is on; absent: the sample's creation. */
  readonly path?: FaultPath;
  /** With a path: spec 0's reference children, the lives the per-life values were learned from. */
  readonly learnedFrom?: readonly ReferenceChild[];
}

/** A crash that hit its line: what the fault did. */
export type Crashed = Extract<CrashOutcome, { readonly status: "crashed" }>;

/** What a crash-line scenario saw. */
export type CrashLineObservation =
  /** The crash missed its line (not reached, another write, a kill that failed): nothing restarted. */
  | { readonly restarted: false; readonly line: CrashLine; readonly crash: CrashOutcome }
  /** Crashed where it was meant to, restarted, converged. */
  | {
      readonly restarted: true;
      readonly line: CrashLine;
      readonly crash: Crashed;
      readonly reference: readonly ReferenceChild[];
      readonly roles?: ChildRoles;
      readonly path?: FaultPath;
      readonly learnedFrom?: readonly ReferenceChild[];
      /** The children the operator created in this scenario that still exist, after the convergence. */
      readonly live: readonly LiveChild[];
      /** Every operator write of the scenario, before the crash and after the restart. */
      readonly writes: readonly WriteEntry[];
      readonly operatorLog: readonly string[];
    };

/**
 * The crash lines whose write is a create (`creates`) or any other write:
 * every line of the sample's creation (spec 0's reference), then the lines
 * the contract's budget chooses on the way to each update (update-paths.ts);
 * when there is none, the skip with `none` as its reason.
 */
export function crashLineTargets(
  { contract, references }: TargetContext,
  creates: boolean,
  none: string,
): CrashLineTarget[] | Skip {
  const reference = references.get(0);
  if (!reference) return [];
  const ofEffect = (l: CrashLine) => (l.write.effect === "created") === creates;
  const fromCreation = crashLines(reference, contract)
    .filter(ofEffect)
    .map((line) => ({
      line,
      reference: reference.children,
      ...(reference.roles ? { roles: reference.roles } : {}),
    }));
  const onUpdates = updatePathLines({ contract, references }).filter((t) => ofEffect(t.line));
  if (fromCreation.length + onUpdates.length === 0) {
    return { target: "write sequence", skip: forWantOfChildren(reference, none) };
  }
  return [...fromCreation, ...onUpdates];
}

/** The specs a crash check needs references of: the sample's, and each update whose way is swept. */
export function crashLineSpecs(contract: Contract): number[] {
  return [0, ...faultedSpecs(contract)];
}

/** A crash line's target name: its id, after its update's name when it is on one's way. */
export function crashLineName({ line, path }: Pick<CrashLineTarget, "line" | "path">): string {
  return path ? `${path.name}: ${line.id}` : line.id;
}

/**
 * The crash-line sweep's observer: for each write of the reference's
 * sequence, a scenario in which the operator is killed (SIGKILL to its
 * process group) the moment the API server has answered that write, before
 * the operator hears the answer; then it is restarted and must converge to
 * the reference. A create is judged by crash-after-create, any other write
 * by crash-after-write. Each check gets its own (call this once
 * per check): checks that share an observer object share its scenarios, and
 * the runner would assign the other check's scenarios to shards under the
 * first one's id. `scenario` names the namespace.
 */
export function crashLineObserver(scenario: string): Observer<CrashLineTarget, CrashLineObservation> {
  return {
    scenario,
    scenarioOf: ({ line, path }) => (path ? `crash-s${path.spec}-${line.ordinal}` : `crash-${line.ordinal}`),
    async observe(context, target) {
      const { line, reference, roles, path, learnedFrom } = target;
      assertFindable(line);
      context.progress(`crash after write ${crashLineName(target)}`);
      const opened = await context.open();
      const progress = (text: string) => context.progress(text);
      const stimulus = path && (await walkToUpdate(opened, context.contract, path.spec, progress));
      const crash = await crashAtLine(context, opened, line, roles, stimulus);
      if (crash.status !== "crashed") return { restarted: false, line, crash };

      context.progress(`restarting the operator after the crash at ${line.id}`);
      await opened.restartOperator();
      await opened.converge("convergence after the restart");
      const live = await liveChildObjects(opened);
      return {
        restarted: true,
        line,
        crash,
        reference,
        ...(roles ? { roles } : {}),
        ...(path ? { path } : {}),
        ...(learnedFrom ? { learnedFrom } : {}),
        live,
        writes: opened.operatorWrites(),
        operatorLog: await opened.operatorLog(10),
      };
    },
  };
}

/**
 * The verdict on a crash line: inconclusive when the crash missed its line;
 * else the restarted operator must end as the reference (no duplicate, no
 * missing child, managed fields as the reference's) with every object it had
 * created before the crash still the same object (same UID), unless the
 * contract's promises allow its recreation. Pure.
 */
export function judgeCrashLine(observation: CrashLineObservation, contract: Contract): Judgement {
  if (!observation.restarted) {
    // missedCrash judges every outcome but "crashed", the only one the observer restarts after.
    return (
      missedCrash(observation.line, observation.crash) ?? {
        status: "inconclusive",
        message: "the crash hit its line, but the operator was not restarted",
      }
    );
  }
  const { crash, reference, roles, live, writes, operatorLog, path } = observation;
  const { hit, proof } = crash;
  const { comparison, volatile } = compareAfterFault(live, reference, contract, {
    ...(roles ? { roles } : {}),
    writes,
    ...(observation.learnedFrom ? { learnedFrom: observation.learnedFrom } : {}),
  });
  // What the operator had created before the crash must be the same objects after it, but for
  // what the update itself removes or replaces.
  const created = writes.filter((e) => e.effect === "created" && e.seq <= hit.seq);
  const through = path ? keptThroughUpdate(created, reference, roles, path) : { kept: created, notes: [] };
  const { losses: recreated, excused } = identityLosses(
    through.kept,
    comparison,
    // Kinds from the reference too: a gone object may have no live namesake to tell its kind.
    new ObjectKinds(contract, [...reference, ...comparison.children]),
  );
  const evidence = {
    writes: writes.filter((e) => e.seq > hit.seq - 1).map(writeEvidence),
    ...(comparison.diffs.length > 0 ? { diffs: comparison.diffs } : {}),
    notes: [...proof, ...recreated, ...excused, ...through.notes, ...volatile, ...comparison.clockMade],
  };
  const problems = [...(endStateMatches(comparison) ? [] : [describeMismatch(comparison)]), ...recreated];
  const where = path ? ` of ${path.name}` : "";
  if (problems.length > 0) {
    return {
      status: "failed",
      message: `after the crash${path ? ` on the way to ${path.name}` : ""} and restart: ${problems.join("; ")}`,
      evidence: { ...evidence, operatorLog },
    };
  }
  const unsure = unsureAfterFault(comparison, evidence);
  if (unsure) return unsure;
  return {
    status: "passed",
    message: `restarted after the crash, it converged to the reference${where}: no duplicate, ${comparison.children.length} child(ren) as the reference has them in every field it manages, none recreated${excused.length > 0 ? ` but ${excused.length} the contract's promises allow (see the notes)` : ""}`,
    evidence,
  };
}
