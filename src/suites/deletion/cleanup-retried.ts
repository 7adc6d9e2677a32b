import { deleteCustomResource, untilDeleted } from "../../scenario/deletion.js";
import { Inconclusive } from "../../scenario/scenario.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import { defineCheck, type Judgement } from "../check.js";
import {
  deletionEnd,
  deletionEvidence,
  deletionProblems,
  deletionReference,
  type DeletionEnd,
  type DeletionReference,
  undecidedCreates,
} from "./deletion-end.js";

/** How the cleanup's first delete is answered instead of by the API server. */
export type CleanupFailure = 500 | 504;

export interface CleanupFailureTarget {
  readonly status: CleanupFailure;
  /** The reference cleanup's first delete: the one that fails. */
  readonly delete: Pick<WriteEntry, "group" | "resource" | "name">;
  readonly reference: DeletionReference;
}

export interface CleanupFailureObservation {
  readonly status: CleanupFailure;
  /** The failed write, when the fault acted. */
  readonly failed?: WriteEntry;
  readonly end: DeletionEnd;
}

const FAILURE_WORDS: Record<CleanupFailure, string> = {
  500: "500 Internal Server Error",
  504: "504 Gateway Timeout (a timeout)",
};

/**
 * The cleanup's first delete (the reference's first delete while the custom
 * resource terminates) answered with a server error instead of by the API
 * server, once: 500, then in another scenario 504, a timeout. The operator
 * must retry it: a later delete of the same object succeeds, the finalizer
 * stays until it has, and then the deletion ends as the reference's did.
 */
export const cleanupRetried = defineCheck<CleanupFailureTarget, CleanupFailureObservation>({
  id: "deletion/cleanup-retried",
  level: "MUST",
  summary:
    "a cleanup delete that fails (500, a timeout) is retried: the finalizer stays until the cleanup succeeded, and is then released",
  references: () => [0],
  targets(context) {
    const reference = deletionReference(context);
    if (reference === undefined) return [];
    if ("skip" in reference) return reference;
    const { customResource } = context.contract;
    const first = reference.deletion.writes.find(
      (w) =>
        w.verb === "delete" &&
        w.code >= 200 &&
        w.code < 300 &&
        !(w.group === customResource.group && w.resource === customResource.resource),
    );
    if (!first) {
      return { target: "cleanup", skip: "the reference's cleanup deletes nothing: no delete to fail" };
    }
    return ([500, 504] as const).map((status) => ({
      status,
      delete: { group: first.group, resource: first.resource, ...(first.name ? { name: first.name } : {}) },
      reference,
    }));
  },
  targetName: (target) => `${target.delete.resource} delete answered ${target.status}`,
  observer: {
    scenario: "cleanup-failure",
    async observe(context, { status, delete: failing, reference }) {
      const scenario = await context.open();
      await scenario.startWithSample();
      await scenario.converge("convergence of the sample");
      // The first delete of that resource in this life (its name may carry this life's UID).
      const fault = scenario.proxy.arm({
        kind: "fail-with",
        status,
        match: {
          namespace: scenario.namespace,
          verb: "delete",
          group: failing.group,
          resource: failing.resource,
        },
      });
      context.progress(
        `deleting the custom resource; its cleanup's ${failing.resource} delete answered ${status}`,
      );
      const deleteSeq = await deleteCustomResource(scenario, "Background");
      const stuck = await untilDeleted(scenario, context.deps, deleteSeq);
      const outcome = fault.outcome();
      if (outcome.status === "failed")
        throw new Inconclusive(`the fault could not be carried out: ${outcome.error}`);
      if (outcome.status === "not-reached") fault.disarm();
      return {
        status,
        ...(outcome.status === "not-reached" ? {} : { failed: outcome.evidence.hit }),
        end: await deletionEnd(scenario, reference, deleteSeq, stuck),
      };
    },
  },
  judge({ status, failed, end }, contract): Judgement {
    const words = FAILURE_WORDS[status];
    if (!failed) {
      return {
        status: "inconclusive",
        message: `the deletion made no ${words.split(" ")[0]}-failable delete like the reference's cleanup: nothing failed`,
        evidence: deletionEvidence(end, contract.customResource),
      };
    }
    const proof = `write ${failed.seq}: ${failed.verb} ${failed.resource}/${failed.name ?? ""} answered ${words} by the kit`;
    const problems = deletionProblems(end, contract.customResource);
    const retry = end.writes.find(
      (w) =>
        w.seq > failed.seq &&
        w.verb === "delete" &&
        w.resource === failed.resource &&
        w.name === failed.name &&
        (w.code < 300 || w.code === 404),
    );
    const { group, resource } = contract.customResource;
    const release = end.writes.find(
      (w) =>
        w.group === group && w.resource === resource && w.verb !== "delete" && !w.subresource && w.code < 300,
    );
    if (!retry)
      problems.push(`it never deleted ${failed.resource}/${failed.name ?? ""} again after the ${status}`);
    if (retry && release && release.seq < retry.seq) {
      problems.push(
        `it released the custom resource (write ${release.seq}) before the cleanup succeeded (write ${retry.seq})`,
      );
    }
    const evidence = deletionEvidence(end, contract.customResource, [proof]);
    if (problems.length > 0) {
      return {
        status: "failed",
        message: `after a cleanup delete answered ${words}: ${problems.join("; ")}`,
        evidence: { ...evidence, operatorLog: end.operatorLog },
      };
    }
    const undecided = undecidedCreates(end, contract.customResource, evidence);
    if (undecided) return undecided;
    return {
      status: "passed",
      message: `the cleanup delete answered ${words} was retried (write ${retry?.seq ?? "?"}) before the finalizer went; the deletion ended as the reference's`,
      evidence,
    };
  },
});
