import { randomBytes } from "node:crypto";
import type { Contract } from "../../contract/load-contract.js";
import { observedGenerationOf } from "../../contract/observed-generation.js";
import type { KubeObject, ObjectRef } from "../../kube/kube-client.js";
import { isEffective } from "../../proxy/write-effect.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import type { Evidence } from "../../report/report-model.js";
import { delayedRequeuePending } from "../../scenario/clock-queues.js";
import { hasGivenUp, silentFor } from "../../scenario/quiescence.js";
import { doneRegardless, holds, notYet, untilQuiet } from "../../scenario/quiet-wait.js";
import {
  liveChildren,
  recordReference,
  writeEvidence,
  type ChildRecord,
  type ReferenceState,
} from "../../scenario/reference-state.js";
import { Inconclusive, NeverQuiet, type Scenario } from "../../scenario/scenario.js";
import type { Judgement, ObserveContext, Observer } from "../check.js";
import { ObjectKinds, sortByPromises, writeLabel, type PromisedWrites } from "../shared/promised.js";
import { runawayCreation, runawayRollout } from "../shared/runaway-writes.js";
import { touch } from "../shared/touches.js";

/** The one target of the suite's four checks: they judge one scenario together. */
export const TARGET = "restart and foreign touches";
export type Target = typeof TARGET;

/** The optional phase of the scenario: a spec update, applied last (it changes the spec) and only when needed. */
export type SpecUpdatePhase = "spec update";

/** What a child of the reference is now: its identity, or gone. */
export type ChildNow =
  | { readonly ref: ObjectRef; readonly gone: true }
  | { readonly ref: ObjectRef; readonly gone: false; readonly uid?: string; readonly generation?: number };

/** How the contract's first spec update was followed. */
export type SpecUpdate =
  /** The API server refused the update (the Inconclusive's message). */
  | { readonly outcome: "refused"; readonly message: string }
  /** observedGeneration caught up and the operator fell quiet. */
  | { readonly outcome: "caught-up"; readonly generation?: number }
  /**
   * Not caught up, and the operator silent so long it is not going to
   * (`gave-up`); or the convergence deadline passed while it was still
   * writing (`deadline`): no evidence either way, only the last reading.
   */
  | {
      readonly outcome: "gave-up" | "deadline";
      readonly lastReason: string;
      /** The last reading: the custom resource's observedGeneration and generation. */
      readonly observed?: number;
      readonly generation?: number;
      readonly timeoutMs?: number;
      /** The operator's writes since the update. */
      readonly writes: readonly WriteEntry[];
      readonly operatorLog: readonly string[];
    };

/** The scenario ran to its end: the sample converged after the restart and after the touches. */
export interface SettledObservation {
  readonly outcome: "settled";
  /** The baseline: the converged sample before the restart. */
  readonly reference: ReferenceState;
  /** The operator's writes after the baseline, until the scenario settled after the touches. */
  readonly after: readonly WriteEntry[];
  /** The kit's touch of the custom resource, as the write log has it. */
  readonly customResourceTouch?: WriteEntry;
  /** The custom resource once settled after the touches. */
  readonly settled: KubeObject;
  /** The operator's children that exist now. */
  readonly liveChildren: readonly ChildRecord[];
  /** Each of the reference's children as it is now, in the reference's order. */
  readonly referenceChildrenNow: readonly ChildNow[];
  /** The spec update, when observed-generation needed it and it was due. */
  readonly specUpdate?: SpecUpdate;
  /**
   * At the baseline its last reconcile had asked for a delayed requeue (its
   * queues showed it): its clock had work to come, which may fall due
   * inside the restart's or the touches' reconciles (maybeTicksApart).
   * Absent in observations recorded before it was kept.
   */
  readonly clockPendingAtBaseline?: true;
}

/** A convergence never fell quiet (the NeverQuiet error, as data). */
export interface NeverQuietObservation {
  readonly outcome: "never-quiet";
  readonly message: string;
  readonly notes: readonly string[];
  /** The operator's writes while it was ready (or in the whole wait, if it never was). */
  readonly writes: readonly WriteEntry[];
  /** Whether the custom resource was ready while they were made. */
  readonly ready: boolean;
  /** The children there were by then: they tell the kinds the writes are about (for their promises). */
  readonly children: readonly ChildRecord[];
}

export type RestartAndTouchesObservation = SettledObservation | NeverQuietObservation;

/** What the custom resource's observedGeneration says before any spec update. */
export type GenerationBeforeUpdate =
  /** The baseline reports none: nothing to judge. */
  | { readonly kind: "none" }
  /** After metadata-only changes it is not the generation. */
  | { readonly kind: "behind"; readonly observed?: number; readonly generation?: number }
  /** It is the generation: a spec update is what is left to follow. */
  | { readonly kind: "current"; readonly generation?: number };

/** Reads the baseline's and the settled custom resource's observedGeneration (the one reader's rule). Pure. */
export function generationBeforeUpdate(
  reference: ReferenceState,
  settled: KubeObject,
): GenerationBeforeUpdate {
  if (observedGenerationOf({ status: reference.customResource.status }) === undefined)
    return { kind: "none" };
  const generation = settled.metadata?.generation;
  const observed = observedGenerationOf(settled);
  return observed !== generation ? { kind: "behind", observed, generation } : { kind: "current", generation };
}

/**
 * One scenario, four verdicts. After the sample converged: restart the
 * operator (a full resync of everything it watches), then touch each child
 * and the custom resource with a foreign label. A label is metadata only for
 * every kind (an annotation is not: a Deployment's annotations count as
 * spec and bump its generation, which legitimately moves a correct
 * operator's readiness). A correct operator writes nothing that changes
 * anything through all of it. Last, when observed-generation needs it, the
 * contract's first spec update (it changes the spec, so nothing is judged
 * after it).
 */
export const restartAndTouches: Observer<Target, RestartAndTouchesObservation, SpecUpdatePhase> = {
  scenario: "status-stability",
  async observe(context) {
    const scenario = await context.open();
    try {
      return await settle(context, scenario);
    } catch (error) {
      if (!(error instanceof NeverQuiet)) throw error;
      return {
        outcome: "never-quiet",
        message: error.message,
        notes: [...error.notes],
        writes: [...error.writes],
        ready: error.ready,
        children: await liveChildren(scenario).catch(() => []),
      };
    }
  },
};

async function settle(
  context: ObserveContext<SpecUpdatePhase>,
  scenario: Scenario,
): Promise<SettledObservation> {
  context.progress(`namespace ${scenario.namespace}: starting the operator, creating the sample`);
  await scenario.startWithSample();
  const reference = await recordReference(scenario, await scenario.converge("convergence of the sample"));
  const clockPending = delayedRequeuePending(scenario.operator.queueReadings ?? []);

  context.progress("restarting the operator");
  await scenario.restartOperator();
  await scenario.converge("convergence after the restart");

  context.progress(
    `touching ${reference.children.length} child(ren) and the custom resource with a foreign label`,
  );
  const customResourceTouch = await touchAll(scenario, reference);
  const settled = await scenario.converge("convergence after the touches");
  const after = scenario.operatorWrites({ after: reference.markSeq });
  const live = await liveChildren(scenario);
  const referenceChildrenNow: ChildNow[] = [];
  for (const child of reference.children) {
    const now = await scenario.kit.tryGet(child.ref);
    referenceChildrenNow.push(
      now
        ? {
            ref: child.ref,
            gone: false,
            ...(now.metadata?.uid === undefined ? {} : { uid: now.metadata.uid }),
            ...(now.metadata?.generation === undefined ? {} : { generation: now.metadata.generation }),
          }
        : { ref: child.ref, gone: true },
    );
  }

  // Judged last: the update changes the spec. Only when the old verdict needed it: an observedGeneration
  // that is current after the metadata-only changes, and an update in the contract to follow.
  const update = context.contract.updates[0];
  const due =
    context.phases.has("spec update") &&
    update !== undefined &&
    generationBeforeUpdate(reference, settled).kind === "current";
  const specUpdate = due ? await followSpecUpdate(context, scenario, update) : undefined;
  return {
    outcome: "settled",
    reference,
    after,
    ...(customResourceTouch ? { customResourceTouch } : {}),
    settled,
    liveChildren: live,
    referenceChildrenNow,
    ...(specUpdate ? { specUpdate } : {}),
    ...(clockPending ? { clockPendingAtBaseline: true as const } : {}),
  };
}

/** Touches every child and the custom resource with a foreign label; the kit's entry for the custom resource. */
async function touchAll(scenario: Scenario, reference: ReferenceState): Promise<WriteEntry | undefined> {
  const value = randomBytes(4).toString("hex");
  const targets = [...reference.children.map((c) => c.ref), scenario.customResource];
  for (const ref of targets) await touch(scenario, ref, value);
  const cr = scenario.customResource;
  const { group, resource } = scenario.contract.customResource;
  return scenario.proxy.writeLog
    .query({ actor: "kit", verb: "patch", group, resource, namespace: cr.namespace, name: cr.name })
    .at(-1);
}

/**
 * Applies the contract's first spec update and waits, by the quiescence
 * rule counted from the update, for observedGeneration to catch up.
 */
async function followSpecUpdate(
  context: ObserveContext<SpecUpdatePhase>,
  scenario: Scenario,
  update: Readonly<Record<string, unknown>>,
): Promise<SpecUpdate> {
  const cr = scenario.customResource;
  context.progress("applying the contract's first spec update");
  const mark = scenario.proxy.writeLog.lastSeq;
  try {
    await scenario.applyUpdate(update, 1);
  } catch (error) {
    if (!(error instanceof Inconclusive)) throw error;
    return { outcome: "refused", message: error.message };
  }
  const updatedAt = context.clock.now();
  let last: { observed?: number; generation?: number } = {};
  const { value: ended } = await untilQuiet<
    | { readonly caughtUp: KubeObject }
    | { readonly stopped: "gave-up" | "deadline"; readonly lastReason: string; readonly timeoutMs?: number }
  >(scenario, {
    awaited: "observedGeneration to catch up",
    stimulusAt: updatedAt,
    signal: context.deps.signal,
    observe: async (silence) => {
      const now = await context.deps.kube.get(cr);
      const seen = observedGenerationOf(now);
      const generation = now.metadata?.generation;
      last = {
        ...(seen === undefined ? {} : { observed: seen }),
        ...(generation === undefined ? {} : { generation }),
      };
      const reason = `observedGeneration ${seen ?? "?"}, generation ${generation ?? "?"}`;
      if (seen === generation) {
        return holds({ caughtUp: now }, (s) => `${reason}; operator wrote ${silentFor(s)} ms ago`);
      }
      return hasGivenUp(silence())
        ? doneRegardless({ stopped: "gave-up", lastReason: reason })
        : notYet(reason);
    },
    atDeadline: ({ timeoutMs, lastReason }) => ({ stopped: "deadline", lastReason, timeoutMs }),
  });
  if ("caughtUp" in ended) {
    const generation = ended.caughtUp.metadata?.generation;
    return { outcome: "caught-up", ...(generation === undefined ? {} : { generation }) };
  }
  return {
    outcome: ended.stopped,
    lastReason: ended.lastReason,
    ...last,
    ...(ended.timeoutMs === undefined ? {} : { timeoutMs: ended.timeoutMs }),
    writes: scenario.operatorWrites({ after: mark }),
    operatorLog: await scenario.operatorLog(15),
  };
}

/** The note for a changed write whose changed fields are unknown on an object with volatile fields. */
export function unreadChanges(entry: WriteEntry): string {
  return `not judged: ${writeLabel(entry)}: its object has volatile fields and the fields it changed could not be read`;
}

/** How the write checks read a scenario that never fell quiet. */
export interface NeverQuietWrites {
  /** "the custom resource was ready but the operator never fell quiet", or the not-ready variant. */
  readonly state: string;
  readonly sorted: PromisedWrites;
  /** The writes that changed stored state and that the promises do not allow. */
  readonly effective: readonly WriteEntry[];
  /** What the operator did again and again ("5 of them creates of configmaps"), when it did. */
  readonly runaway: string | undefined;
  /** Whether the writes are a verdict: ready and still changing things, or runaway creation or rollouts. */
  readonly judged: boolean;
  readonly notes: readonly string[];
}

/**
 * The operator was ready but never fell quiet: its writes while ready are
 * judged as the write checks would judge them after convergence. Pure.
 */
export function neverQuietWrites(observation: NeverQuietObservation, contract: Contract): NeverQuietWrites {
  const { writes } = observation;
  const kinds = new ObjectKinds(contract, observation.children);
  const state = observation.ready
    ? "the custom resource was ready but the operator never fell quiet"
    : "the operator never fell quiet (and the custom resource never became ready)";
  // What the contract allows (a heartbeat in a volatile field of the custom resource) is not counted.
  const sorted = sortByPromises(writes.filter(isEffective), kinds);
  const effective = sorted.counted;
  const notes = [
    `${writes.length} operator write(s) in the wait; the last ${Math.min(20, writes.length)} shown`,
    ...(sorted.excused.length > 0
      ? [
          `${sorted.excused.length} of them allowed by the contract's promises, e.g. ${sorted.excused[0]?.why ?? ""}`,
        ]
      : []),
    ...sorted.unknown.map(unreadChanges),
    ...observation.notes,
  ];
  // Ready and still changing things: avoidable. Not ready: an operator still making progress
  // (replicas coming up) writes too, so only work without end is a verdict: the same kind created
  // again and again, or one workload's pod template changed again and again (a rollout each);
  // anything else stays inconclusive.
  const creates = runawayCreation(effective, (e) => e.resource);
  const rollouts = runawayRollout(effective);
  const runaway = creates
    ? `${creates[1]} of them creates of ${creates[0]}`
    : rollouts && `${rollouts[1]} of them changes of ${rollouts[0]}'s pod template, a rollout each`;
  const judged = observation.ready ? effective.length > 0 : runaway !== undefined;
  return { state, sorted, effective, runaway, judged, notes };
}

/** The last 20 of a window's writes, as evidence. */
export function shown(entries: readonly WriteEntry[]): Record<string, unknown>[] {
  return entries.slice(-20).map(writeEvidence);
}

/** A scenario that never fell quiet, for a check that cannot judge it: inconclusive, with its message and notes. */
export function neverQuietInconclusive(observation: NeverQuietObservation): Judgement {
  const evidence: Evidence | undefined =
    observation.notes.length > 0 ? { notes: [...observation.notes] } : undefined;
  return { status: "inconclusive", message: observation.message, ...(evidence ? { evidence } : {}) };
}
