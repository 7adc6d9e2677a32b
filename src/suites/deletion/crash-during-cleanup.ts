import { writeEvidence } from "../../scenario/reference-state.js";
import { deleteCustomResource, untilDeleted } from "../../scenario/deletion.js";
import { Inconclusive } from "../../scenario/scenario.js";
import { defineCheck, type Judgement } from "../check.js";
import { crashLines, writeMeaning, type CrashLine } from "../shared/crash-lines.js";
import {
  deletionEnd,
  deletionEvidence,
  deletionProblems,
  deletionReference,
  type DeletionEnd,
  type DeletionReference,
  undecidedCreates,
} from "./deletion-end.js";

/** Where the operator is killed: before the deletion (a restart across it), or right after one of its deletion writes. */
export type CleanupCrashPoint = { readonly before: true } | { readonly line: CrashLine };

export interface CleanupCrashTarget {
  readonly point: CleanupCrashPoint;
  readonly reference: DeletionReference;
}

export type CleanupCrashObservation =
  | { readonly crashed: false; readonly target: string; readonly end: DeletionEnd }
  | {
      readonly crashed: true;
      readonly target: string;
      /** What the crash did, for the evidence. */
      readonly proof: readonly string[];
      readonly end: DeletionEnd;
    };

const pointName = (point: CleanupCrashPoint) =>
  "before" in point ? "restart as the deletion begins" : `crash after ${point.line.id}`;

/**
 * The reference's deletion writes (from the kit's delete to the custom
 * resource's disappearance: the cleanup and the finalizer's release), one
 * scenario each: the sample converges, the kit deletes it, the operator is
 * killed right after that write and restarted. Plus one scenario where the
 * operator is stopped as the deletion begins and started again: a cleanup
 * that remembers in memory what to remove has nothing to go on. Each must
 * end as the reference's deletion did: the custom resource gone, nothing its
 * cleanup removes left, nothing created after the delete, no name deleted
 * as two different objects.
 */
export const crashDuringCleanup = defineCheck<CleanupCrashTarget, CleanupCrashObservation>({
  id: "deletion/crash-during-cleanup",
  level: "MUST",
  summary:
    "killed after any write of its cleanup (or restarted as the deletion begins), the operator finishes the deletion: the custom resource and everything its cleanup removes are gone, nothing recreated",
  references: () => [0],
  targets(context) {
    const reference = deletionReference(context);
    if (reference === undefined) return [];
    if ("skip" in reference) return reference;
    if (reference.deletion.stuck) {
      return {
        target: "deletion",
        skip: `the reference's deletion did not finish: ${reference.deletion.stuck}`,
      };
    }
    const reference0 = context.references.get(0);
    const lines = crashLines(
      {
        namespace: reference0?.namespace ?? "",
        writes: reference.deletion.writes,
        ...(reference.roles ? { roles: reference.roles } : {}),
      },
      context.contract,
    );
    return [{ before: true } as const, ...lines.map((line) => ({ line }))].map((point) => ({
      point,
      reference,
    }));
  },
  targetName: (target) => pointName(target.point),
  observer: {
    scenario: "cleanup-crash",
    async observe(context, { point, reference }) {
      const scenario = await context.open();
      await scenario.startWithSample();
      await scenario.converge("convergence of the sample");
      const target = pointName(point);
      if ("before" in point) {
        context.progress("stopping the operator, deleting the custom resource, starting it again");
        await scenario.operator.crash();
        const deleteSeq = await deleteCustomResource(scenario, "Background");
        await scenario.restartOperator();
        const stuck = await untilDeleted(scenario, context.deps, deleteSeq);
        return {
          crashed: true,
          target,
          proof: ["the operator was killed before the kit's delete and started after it"],
          end: await deletionEnd(scenario, reference, deleteSeq, stuck),
        };
      }
      const { line } = point;
      const fault = scenario.proxy.arm({
        kind: "crash-after",
        match: { namespace: scenario.namespace, nth: line.occurrence ?? 1, excludeNoOps: true },
        select: (entry) => writeMeaning(entry, reference.roles) === line.meaning,
      });
      context.progress(`deleting the custom resource; crash after ${line.id}`);
      const deleteSeq = await deleteCustomResource(scenario, "Background");
      const stuck = await untilDeleted(scenario, context.deps, deleteSeq, {
        until: () => fault.outcome().status !== "not-reached",
      });
      const outcome = fault.outcome();
      if (outcome.status === "not-reached") {
        fault.disarm();
        return { crashed: false, target, end: await deletionEnd(scenario, reference, deleteSeq, stuck) };
      }
      if (outcome.status === "failed")
        throw new Inconclusive(`the crash could not be carried out: ${outcome.error}`);
      const { hit, kill } = outcome.evidence;
      context.progress(`restarting the operator after the crash at ${line.id}`);
      await scenario.restartOperator();
      const after = await untilDeleted(scenario, context.deps, hit.seq);
      return {
        crashed: true,
        target,
        proof: [
          `crash after write ${hit.seq} (${hit.verb} ${hit.resource}/${hit.name ?? ""}, answered ${hit.code}): ${kill?.signal ?? "?"} to pids ${kill?.pids.join(", ") ?? "?"}`,
          `the reference's write: ${JSON.stringify(writeEvidence(line.write))}`,
        ],
        end: await deletionEnd(scenario, reference, deleteSeq, after),
      };
    },
  },
  judge(observation, contract): Judgement {
    const { end, target } = observation;
    const { customResource } = contract;
    if (!observation.crashed) {
      // The write never came: the deletion took another way; what it left is still judged.
      const problems = deletionProblems(end, customResource);
      if (problems.length > 0) {
        return {
          status: "failed",
          message: `without the crash's write: ${problems.join("; ")}`,
          evidence: { ...deletionEvidence(end, customResource), operatorLog: end.operatorLog },
        };
      }
      const undecided = undecidedCreates(end, customResource, deletionEvidence(end, customResource));
      if (undecided) return undecided;
      return {
        status: "inconclusive",
        message: `the deletion finished without the reference's write to crash after (${target}); nothing to crash after`,
        evidence: deletionEvidence(end, customResource),
      };
    }
    const problems = deletionProblems(end, customResource);
    const evidence = deletionEvidence(end, customResource, observation.proof);
    if (problems.length > 0) {
      return {
        status: "failed",
        message: problems.join("; "),
        evidence: { ...evidence, operatorLog: end.operatorLog },
      };
    }
    const undecided = undecidedCreates(end, customResource, evidence);
    if (undecided) return undecided;
    return {
      status: "passed",
      message:
        "restarted, it finished the deletion: the custom resource and what its cleanup removes are gone, nothing recreated",
      evidence,
    };
  },
});
