import { describeError } from "../errors.js";
import type { KubeObject } from "../kube/kube-client.js";
import { normalisedName } from "../proxy/faults.js";
import { liveChildren, writeEvidence, type ChildRecord } from "../runner/reference-state.js";
import { Inconclusive } from "../runner/scenario.js";
import type { SpecReference } from "../runner/spec-references.js";
import {
  verdictFor,
  type CheckDefinition,
  type ScenarioResult,
  type SuiteContext,
  inScenario,
} from "./check.js";
import { compareWithReference, describeMismatch, endStateMatches } from "./end-state.js";
import { untilNothingLeft } from "./fault-wait.js";

export const recreateSameName: CheckDefinition = {
  id: "idempotency/recreate-same-name",
  level: "MUST",
  summary:
    "deleted and recreated under the same name, the custom resource gets children of its own: nothing of its previous life is adopted or updated",
};

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
export async function recreateOne(context: SuiteContext, reference: SpecReference): Promise<ScenarioResult> {
  const result = verdictFor(recreateSameName, "delete and recreate the sample", context.clock);
  return inScenario(context, "recreate", result, async (scenario) => {
    await scenario.startWithSample();
    const first = await scenario.converge("convergence of the sample");
    const oldUid = first.metadata?.uid ?? "";
    // The previous life: every object the operator created in it, by UID.
    const previous = new Map<string, string>();
    for (const created of scenario.operatorWrites({ effect: "created" })) {
      if (created.uid && !created.subresource)
        previous.set(created.uid, `${created.resource}/${created.name ?? ""}`);
    }

    context.progress("deleting the custom resource, waiting until it and what it owned are gone");
    const cr = scenario.customResource;
    try {
      await scenario.kit.delete(cr, { propagationPolicy: "Background" });
    } catch (error) {
      throw new Inconclusive(`the API server refused to delete the custom resource: ${describeError(error)}`);
    }
    await untilNothingLeft(context, scenario, "the deleted custom resource", async () =>
      (await scenario?.kit.tryGet(cr)) ? ["the custom resource"] : [],
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
          const live = await scenario?.kit.tryGet(child.ref);
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
    const newUid = second.metadata?.uid ?? "";

    const problems: string[] = [];
    const children = await liveChildren(scenario);
    const key = (c: ChildRecord) => `${c.ref.kind}/${normalisedName(c.ref)}`;
    for (const expected of reference.children) {
      const candidates = children.filter((c) => key(c) === key(expected));
      const fresh = candidates.filter((c) => !previous.has(c.uid));
      const adopted = candidates.find((c) => previous.has(c.uid));
      if (fresh.length === 0 && adopted) {
        problems.push(`${key(adopted)} is the previous life's object (uid ${adopted.uid}), taken over`);
        continue;
      }
      const ownedInReference = ownerUids(expected.object).includes(
        reference.customResource.metadata?.uid ?? "",
      );
      for (const child of fresh) {
        if (!ownedInReference) continue;
        const owners = ownerUids(await scenario.kit.tryGet(child.ref));
        if (!owners.includes(newUid)) {
          problems.push(
            `${key(child)} is not owned by the new custom resource (owners: ${owners.join(", ") || "none"})`,
          );
        }
      }
    }
    const touched = scenario
      .operatorWrites({ after: recreatedAt })
      .filter((e) => e.uid && previous.has(e.uid) && e.verb !== "delete" && e.effect !== "rejected");
    for (const write of touched) {
      problems.push(
        `${write.verb} of ${previous.get(write.uid ?? "") ?? "?"} from the previous life (write ${write.seq})`,
      );
    }
    const comparison = await compareWithReference(scenario, reference, context.deps.contract);
    if (!endStateMatches(comparison)) problems.push(describeMismatch(comparison));
    const evidence = {
      writes: scenario.operatorWrites({ after: recreatedAt }).map(writeEvidence),
      ...(comparison.diffs.length > 0 ? { diffs: comparison.diffs } : {}),
      notes: [
        `previous custom resource uid ${oldUid}, new ${newUid}`,
        `objects of the previous life: ${[...previous].map(([uid, what]) => `${what} (${uid})`).join(", ") || "none"}`,
      ],
    };
    if (problems.length > 0) {
      return result("failed", `after the recreation: ${problems.join("; ")}`, {
        ...evidence,
        operatorLog: await scenario.operator.logTail(10),
      });
    }
    return result(
      "passed",
      `recreated under the same name, it converged with ${comparison.children.length} child(ren) of the new life and touched nothing of the previous one`,
      evidence,
    );
  });
}
