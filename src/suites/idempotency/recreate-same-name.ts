import { describeError } from "../../errors.js";
import type { KubeObject } from "../../kube/kube-client.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import { roleKey, type ChildRoles } from "../../scenario/child-roles.js";
import {
  liveChildObjects,
  liveChildren,
  writeEvidence,
  type ChildRecord,
  type LiveChild,
} from "../../scenario/reference-state.js";
import { Inconclusive } from "../../scenario/scenario.js";
import type { ReferenceChild } from "../../scenario/spec-references.js";
import { defineCheck, type Judgement } from "../check.js";
import { compareAfterFault, unsureAfterFault } from "../shared/after-fault.js";
import { describeMismatch, endStateMatches } from "../shared/end-state.js";
import { untilNothingLeft } from "../shared/fault-wait.js";

/** What the recreated custom resource must converge to: the reference of spec 0. */
export interface RecreateTarget {
  readonly children: readonly ReferenceChild[];
  /** The reference's custom resource's UID: its children owned by it are to be owned by the new one. */
  readonly customResourceUid: string;
  /** Which child is which across lives (the reference's roles). */
  readonly roles?: ChildRoles;
}

export interface RecreateObservation {
  readonly reference: RecreateTarget;
  /** The custom resource's UID in its previous life, and in the new one. */
  readonly oldUid: string;
  readonly newUid: string;
  /** The operator's creates in the previous life: its objects, by UID. */
  readonly previousLife: readonly WriteEntry[];
  /** The operator's writes in the new life (after the recreation). */
  readonly writes: readonly WriteEntry[];
  /** The children the operator created that still exist, after the new life converged. */
  readonly live: readonly LiveChild[];
  readonly operatorLog: readonly string[];
}

const ownerUids = (object: KubeObject | undefined): string[] =>
  (object?.metadata?.ownerReferences ?? []).map((o) => o.uid);

/**
 * The sample converges; the kit deletes it (background propagation) and
 * waits until it is gone and the garbage collector has removed what it
 * owned; then it creates the sample again under the same name, and the
 * operator must converge it with children of the new life: owned by the new
 * UID where the reference's children are owned by the custom resource, none
 * of them an object of the previous life, and no write in the new life to
 * an object of the previous life (deleting one excepted).
 */
export const recreateSameName = defineCheck<RecreateTarget, RecreateObservation>({
  id: "idempotency/recreate-same-name",
  level: "MUST",
  summary:
    "deleted and recreated under the same name, the custom resource gets children of its own: nothing of its previous life is adopted or updated",
  references: () => [0],
  targets({ references }) {
    const reference = references.get(0);
    if (!reference) return [];
    return [
      {
        children: reference.children,
        customResourceUid: reference.customResource.metadata?.uid ?? "",
        ...(reference.roles ? { roles: reference.roles } : {}),
      },
    ];
  },
  targetName: () => "delete and recreate the sample",
  observer: {
    scenario: "recreate",
    async observe(context, reference) {
      const scenario = await context.open();
      await scenario.startWithSample();
      const first = await scenario.converge("convergence of the sample");
      const oldUid = first.metadata?.uid ?? "";
      const previousLife = scenario.operatorWrites({ effect: "created" });

      context.progress("deleting the custom resource, waiting until it and what it owned are gone");
      const cr = scenario.customResource;
      try {
        await scenario.kit.delete(cr, { propagationPolicy: "Background" });
      } catch (error) {
        throw new Inconclusive(
          `the API server refused to delete the custom resource: ${describeError(error)}`,
        );
      }
      await untilNothingLeft(context, scenario, "the deleted custom resource", async () =>
        (await scenario.kit.tryGet(cr)) ? ["the custom resource"] : [],
      );
      // Garbage collection of the previous life's owned children is asynchronous: wait for it, so
      // that what remains is what nothing was going to delete.
      const before = await liveChildren(scenario);
      await untilNothingLeft(
        context,
        scenario,
        "garbage collection of the previous life's children",
        async () => {
          const left: string[] = [];
          for (const child of before) {
            const live = await scenario.kit.tryGet(child.ref);
            if (live?.metadata?.uid === child.uid && ownerUids(live).includes(oldUid)) {
              left.push(`${child.ref.kind}/${child.ref.name}`);
            }
          }
          return left;
        },
      );

      context.progress("recreating the custom resource under the same name");
      const recreatedAt = scenario.proxy.writeLog.lastSeq;
      await scenario.createSample();
      const second = await scenario.converge("convergence of the recreated custom resource");
      const live = await liveChildObjects(scenario);
      return {
        reference,
        oldUid,
        newUid: second.metadata?.uid ?? "",
        previousLife,
        writes: scenario.operatorWrites({ after: recreatedAt }),
        live,
        operatorLog: await scenario.operatorLog(10),
      };
    },
  },
  judge({ reference, oldUid, newUid, previousLife, writes, live, operatorLog }, contract): Judgement {
    // The previous life: every object the operator created in it, by UID.
    const previous = new Map<string, string>();
    for (const created of previousLife) {
      if (created.uid && !created.subresource)
        previous.set(created.uid, `${created.resource}/${created.name ?? ""}`);
    }
    const problems: string[] = [];
    const key = (c: ChildRecord) => roleKey(reference.roles, c.ref.kind, c.ref.name);
    for (const expected of reference.children) {
      const candidates = live.filter((c) => key(c) === key(expected));
      const fresh = candidates.filter((c) => !previous.has(c.uid));
      const adopted = candidates.find((c) => previous.has(c.uid));
      if (fresh.length === 0 && adopted) {
        problems.push(`${key(adopted)} is the previous life's object (uid ${adopted.uid}), taken over`);
        continue;
      }
      if (!ownerUids(expected.object).includes(reference.customResourceUid)) continue;
      for (const child of fresh) {
        const owners = ownerUids(child.object);
        if (!owners.includes(newUid)) {
          problems.push(
            `${key(child)} is not owned by the new custom resource (owners: ${owners.join(", ") || "none"})`,
          );
        }
      }
    }
    const touched = writes.filter(
      (e) => e.uid && previous.has(e.uid) && e.verb !== "delete" && e.effect !== "rejected",
    );
    for (const write of touched) {
      problems.push(
        `${write.verb} of ${previous.get(write.uid ?? "") ?? "?"} from the previous life (write ${write.seq})`,
      );
    }
    const { comparison, volatile } = compareAfterFault(live, reference.children, contract, {
      ...(reference.roles ? { roles: reference.roles } : {}),
      writes,
    });
    if (!endStateMatches(comparison)) problems.push(describeMismatch(comparison));
    const evidence = {
      writes: writes.map(writeEvidence),
      ...(comparison.diffs.length > 0 ? { diffs: comparison.diffs } : {}),
      notes: [
        `previous custom resource uid ${oldUid}, new ${newUid}`,
        `objects of the previous life: ${[...previous].map(([uid, what]) => `${what} (${uid})`).join(", ") || "none"}`,
        ...volatile,
        ...comparison.clockMade,
      ],
    };
    if (problems.length > 0) {
      return {
        status: "failed",
        message: `after the recreation: ${problems.join("; ")}`,
        evidence: { ...evidence, operatorLog },
      };
    }
    const unsure = unsureAfterFault(comparison, evidence);
    if (unsure) return unsure;
    return {
      status: "passed",
      message: `recreated under the same name, it converged with ${comparison.children.length} child(ren) of the new life and touched nothing of the previous one`,
      evidence,
    };
  },
});
