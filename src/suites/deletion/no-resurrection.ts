import type { WriteEntry } from "../../proxy/write-log.js";
import {
  deleteCustomResource,
  HOLD_FINALIZER,
  holdTerminating,
  releaseHold,
  untilDeleted,
} from "../../scenario/deletion.js";
import { defineCheck, type Judgement } from "../check.js";
import {
  createsAfterTheDelete,
  deletionEnd,
  deletionEvidence,
  deletionProblems,
  deletionReference,
  type DeletionEnd,
  type DeletionReference,
  undecidedCreates,
} from "./deletion-end.js";

export interface ResurrectionObservation {
  readonly end: DeletionEnd;
  /** The kit's hold on the terminating custom resource (absent in observations recorded before it). */
  readonly hold?: {
    /** The write log's sequence number at the hold's release (the kit's patch, or the last write before it). */
    readonly releasedAt: number;
  };
}

/** Updates of children (not the custom resource, not deletes) after the delete: shown, not judged. */
function childUpdates(
  writes: readonly WriteEntry[],
  customResource: { group: string; resource: string },
): WriteEntry[] {
  return writes.filter(
    (w) =>
      w.verb !== "delete" &&
      w.effect !== "created" &&
      w.effect !== "no-op" &&
      w.code >= 200 &&
      w.code < 300 &&
      !(w.group === customResource.group && w.resource === customResource.resource),
  );
}

/**
 * The sample converges; the kit deletes it in the foreground (as
 * `kubectl delete --cascade=foreground`): the custom resource stays,
 * terminating, while the garbage collector deletes what it owns, and every
 * deletion is an event the operator sees. A finalizer of the kit's keeps it
 * terminating after that until the operator is quiet (holdTerminating), as
 * Pods that end gracefully do on a real cluster. From the delete on, the operator
 * must create nothing (the classic: a reconcile of a terminating object
 * recreates what the garbage collector just removed), and the deletion must
 * end as the reference's did.
 */
export const noResurrection = defineCheck<DeletionReference, ResurrectionObservation>({
  id: "deletion/no-resurrection",
  level: "MUST",
  summary:
    "from the moment the custom resource is terminating, the operator creates nothing: what the garbage collector deletes stays deleted",
  references: () => [0],
  targets(context) {
    const reference = deletionReference(context);
    if (reference === undefined) return [];
    if ("skip" in reference) return reference;
    return [reference];
  },
  targetName: () => "foreground deletion",
  observer: {
    scenario: "no-resurrection",
    async observe(context, reference) {
      const scenario = await context.open();
      await scenario.startWithSample();
      await scenario.converge("convergence of the sample");
      await holdTerminating(scenario);
      context.progress(
        "deleting the custom resource in the foreground, held terminating by the kit's finalizer",
      );
      const deleteSeq = await deleteCustomResource(scenario, "Foreground");
      const held = await untilDeleted(scenario, context.deps, deleteSeq, { held: true });
      await releaseHold(scenario);
      const releaseSeq = scenario.proxy.writeLog.lastSeq;
      // Stuck while held: the operator's own finalizer or what the garbage collector awaits; no second wait.
      const stuck = held ?? (await untilDeleted(scenario, context.deps, deleteSeq));
      return {
        end: await deletionEnd(scenario, reference, deleteSeq, stuck),
        hold: { releasedAt: releaseSeq },
      };
    },
  },
  judge({ end, hold }, contract): Judgement {
    const updates = childUpdates(end.writes, contract.customResource);
    const notes = [
      ...(hold
        ? [
            `the kit held the terminating custom resource with its finalizer ${HOLD_FINALIZER} until the operator's finalizers and the garbage collector's work were done and the operator was quiet, and released it at write ${hold.releasedAt}: a real cluster keeps a terminating object that long while its Pods end gracefully`,
          ]
        : []),
      ...updates.map(
        (w) =>
          `write ${w.seq}: ${w.verb} ${w.resource}/${w.name ?? ""} while terminating (an update, not judged)`,
      ),
    ];
    const problems = deletionProblems(end, contract.customResource);
    const evidence = deletionEvidence(end, contract.customResource, notes);
    const excused = createsAfterTheDelete(end, contract.customResource).excused.size;
    if (problems.length > 0) {
      return {
        status: "failed",
        message: `in a foreground deletion: ${problems.join("; ")}`,
        evidence: { ...evidence, operatorLog: end.operatorLog },
      };
    }
    const undecided = undecidedCreates(end, contract.customResource, evidence);
    if (undecided) return undecided;
    return {
      status: "passed",
      message:
        excused === 0
          ? "deleted in the foreground, the custom resource went with everything its cleanup removes, and the operator created nothing after the delete"
          : `deleted in the foreground, the custom resource went with everything its cleanup removes, and the operator created nothing after the delete but ${excused} create(s) from a view without the deletion (the notes show each)`,
      evidence,
    };
  },
});
