import { randomBytes } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { describeError } from "../errors.js";
import type { KubeObject } from "../kube/kube-client.js";
import { describeRef, liveChildren, writeEvidence, type ChildRecord } from "../runner/reference-state.js";
import { Inconclusive } from "../runner/scenario.js";
import { normalisedName } from "../proxy/faults.js";
import { pollUntil, PollTimeoutError } from "../util/poll.js";
import {
  inScenario,
  skippedResult,
  verdictFor,
  withReference,
  type CheckDefinition,
  type ScenarioResult,
  type Suite,
  type SuiteContext,
} from "./check.js";
import { driftPatch, driftTargets, formatPath, valueAt, type DriftTarget } from "./drift-targets.js";
import { ObjectKinds } from "./promised.js";

/** The foreign metadata the kit adds with every perturbation: it must survive the repair. */
export const FOREIGN_ANNOTATION = "reconcile-conformance.dev/foreign-annotation";
export const FOREIGN_LABEL = "reconcile-conformance.dev/foreign-label";

/**
 * How long the operator may stay idle (no write at all) after a perturbation
 * before the kit concludes it is not going to react: an operator that watches
 * its children reacts to the change at once. (One that repairs only on a
 * periodic resync is judged by what it did within this time.)
 */
export const GIVE_UP_IDLE_MS = 10_000;

/** More effective writes than this to one object to repair one field is a write per reconcile, not a repair. */
const REPAIR_WRITE_BOUND = 3;

const managedField: CheckDefinition = {
  id: "drift/managed-field",
  level: "MUST",
  summary:
    "a managed field of a child changed behind the operator's back is repaired in place, keeping foreign metadata",
};
const deletedChild: CheckDefinition = {
  id: "drift/deleted-child",
  level: "MUST",
  summary: "a deleted child is recreated as the reference has it",
};

const CHECKS = [managedField, deletedChild];

/**
 * One scenario per target: the sample converges in a fresh namespace, the
 * kit changes one managed field of one child (and adds a foreign annotation
 * and label in the same write), and the operator must put the field back by
 * updating that object. Then one scenario per child, deleted.
 */
export const drift: Suite = {
  name: "drift",
  checks: CHECKS,
  referencesNeeded: (selected) => (CHECKS.some((c) => selected.has(c.id)) ? [0] : []),
  async run(context: SuiteContext, selected): Promise<ScenarioResult[]> {
    if (!CHECKS.some((c) => selected.has(c.id))) return [];
    // The targets come from the reference state of the sample (shared with every other suite).
    return withReference(context, 0, CHECKS, selected, async (reference) => {
      const discovered = {
        targets: reference.children.flatMap((child) =>
          driftTargets({ kind: child.ref.kind, object: child.object }, context.deps.contract.drift),
        ),
        children: reference.children,
      };
      const results: ScenarioResult[] = [];
      if (selected.has(managedField.id)) {
        if (discovered.targets.length === 0) {
          results.push(
            skippedResult(managedField.id, "children", "no managed field of any child to perturb"),
          );
        }
        results.push(
          ...(await context.sideBySide(discovered.targets, (target) => {
            context.progress(`perturbing ${target.id}`);
            return perturbOne(context, target);
          })),
        );
      }
      if (selected.has(deletedChild.id)) {
        if (discovered.children.length === 0) {
          results.push(
            skippedResult(
              deletedChild.id,
              "children",
              "the operator created no child on its way to the reference: nothing to delete",
            ),
          );
        }
        results.push(
          ...(await context.sideBySide(discovered.children, (child) => {
            context.progress(`deleting ${describeRef(child.ref)}`);
            return deleteOne(context, child, discovered.targets);
          })),
        );
      }
      return results;
    });
  },
};

async function perturbOne(context: SuiteContext, target: DriftTarget): Promise<ScenarioResult> {
  const result = verdictFor(managedField, target.id, context.clock);
  return inScenario(context, "drift-field", result, async (scenario) => {
    await scenario.startWithSample();
    await scenario.converge("convergence of the sample");
    const child = (await liveChildren(scenario)).find(
      (c) => c.ref.kind === target.kind && normalisedName(c.ref) === target.name,
    );
    if (!child)
      throw new Inconclusive(
        `${target.kind}/${target.name} does not exist in this scenario's converged state`,
      );
    const live = await scenario.kit.get(child.ref);
    if (!isDeepStrictEqual(valueAt(live, target.path), target.value)) {
      throw new Inconclusive(
        `${target.id} is ${JSON.stringify(valueAt(live, target.path))} here, not the reference's ${JSON.stringify(target.value)}`,
      );
    }
    const nonce = randomBytes(4).toString("hex");
    const mark = scenario.proxy.writeLog.lastSeq;
    try {
      await scenario.kit.patchJson(
        child.ref,
        driftPatch(target, live, {
          annotation: [FOREIGN_ANNOTATION, nonce],
          label: [FOREIGN_LABEL, nonce],
        }),
      );
    } catch (error) {
      throw new Inconclusive(
        `the API server refused the perturbation of ${target.id}: ${describeError(error)}`,
      );
    }
    const perturbedAt = context.clock.now();
    const writesToIt = () =>
      scenario
        .operatorWrites({ after: mark })
        .filter((e) => e.group === child.group && e.resource === child.resource && e.name === child.ref.name);
    let repaired: KubeObject | { idle: true; value: unknown };
    try {
      repaired = await pollUntil<KubeObject | { idle: true; value: unknown }>(
        async () => {
          const now = await scenario.kit.tryGet(child.ref);
          if (!now) return { done: false, reason: `${describeRef(child.ref)} is gone` };
          const value = valueAt(now, target.path);
          if (!isDeepStrictEqual(value, target.value)) {
            if (
              scenario.proxy.operatorIdleMs >= GIVE_UP_IDLE_MS &&
              context.clock.now() - perturbedAt >= GIVE_UP_IDLE_MS
            ) {
              return { done: true, value: { idle: true, value } };
            }
            return { done: false, reason: `${formatPath(target.path)} is ${JSON.stringify(value)}` };
          }
          const idle = Math.min(scenario.proxy.operatorIdleMs, context.clock.now() - perturbedAt);
          return idle >= context.deps.contract.quietPeriodMs
            ? { done: true, value: now }
            : { done: false, reason: `restored; operator wrote ${idle} ms ago` };
        },
        {
          description: `${target.id} to be repaired`,
          timeoutMs: context.deps.contract.timeouts.convergeMs,
          intervalMs: 100,
          signal: context.deps.signal,
        },
      );
    } catch (error) {
      if (!(error instanceof PollTimeoutError)) throw error;
      return result("failed", `not repaired within ${error.timeoutMs / 1000} s: ${error.lastReason}`, {
        diffs: [
          {
            object: describeRef(child.ref),
            path: formatPath(target.path),
            expected: target.value,
            actual: target.perturbed,
          },
        ],
        writes: writesToIt().map(writeEvidence),
        operatorLog: await scenario.operator.logTail(10),
      });
    }
    if ("idle" in repaired) {
      return result(
        "failed",
        `not repaired: ${formatPath(target.path)} is still ${JSON.stringify(repaired.value)}, and the operator has made no write for ${GIVE_UP_IDLE_MS / 1000} s since the perturbation`,
        {
          diffs: [
            {
              object: describeRef(child.ref),
              path: formatPath(target.path),
              expected: target.value,
              actual: repaired.value,
            },
          ],
          writes: writesToIt().map(writeEvidence),
          operatorLog: await scenario.operator.logTail(10),
        },
      );
    }
    const effective = writesToIt().filter(
      (e) => e.effect === "changed" || e.effect === "created" || e.effect === "deleted",
    );
    const recreated =
      repaired.metadata?.uid === child.uid
        ? undefined
        : `repaired by recreating ${describeRef(child.ref)} (uid ${child.uid} -> ${repaired.metadata?.uid ?? "?"}), not by an update in place`;
    // A child whose contract entry does not promise `uid` may be recreated: the rest is still judged.
    const recreationAllowed =
      recreated &&
      new ObjectKinds(context.deps.contract, [child]).withdrawn(
        { group: child.group, resource: child.resource, name: child.ref.name },
        "uid",
      );
    const evidence = {
      writes: writesToIt().map(writeEvidence),
      ...(recreationAllowed ? { notes: [`not counted: ${recreated}: ${recreationAllowed}`] } : {}),
    };
    if (recreated && !recreationAllowed) return result("failed", recreated, evidence);
    const lost = [
      repaired.metadata?.annotations?.[FOREIGN_ANNOTATION] === nonce
        ? undefined
        : `annotation ${FOREIGN_ANNOTATION}`,
      repaired.metadata?.labels?.[FOREIGN_LABEL] === nonce ? undefined : `label ${FOREIGN_LABEL}`,
    ].filter((x): x is string => x !== undefined);
    if (lost.length > 0)
      return result("failed", `repaired, but another writer's ${lost.join(" and ")} was erased`, evidence);
    if (effective.length > REPAIR_WRITE_BOUND) {
      return result(
        "failed",
        `repaired with ${effective.length} effective writes to ${describeRef(child.ref)} (a repair takes at most ${REPAIR_WRITE_BOUND})`,
        evidence,
      );
    }
    return result(
      "passed",
      `repaired ${recreationAllowed ? "by recreating it, as the contract allows," : "in place"} by ${effective.length} write(s); foreign metadata kept`,
      evidence,
    );
  });
}

async function deleteOne(
  context: SuiteContext,
  reference: ChildRecord,
  targets: readonly DriftTarget[],
): Promise<ScenarioResult> {
  const name = `${reference.ref.kind}/${normalisedName(reference.ref)}`;
  const result = verdictFor(deletedChild, name, context.clock);
  return inScenario(context, "drift-deleted", result, async (scenario) => {
    await scenario.startWithSample();
    await scenario.converge("convergence of the sample");
    const child = (await liveChildren(scenario)).find(
      (c) => c.ref.kind === reference.ref.kind && normalisedName(c.ref) === normalisedName(reference.ref),
    );
    if (!child) throw new Inconclusive(`${name} does not exist in this scenario's converged state`);
    const mark = scenario.proxy.writeLog.lastSeq;
    try {
      await scenario.kit.delete(child.ref, { propagationPolicy: "Background" });
    } catch (error) {
      throw new Inconclusive(`the API server refused the deletion of ${name}: ${describeError(error)}`);
    }
    const deletedAt = context.clock.now();
    const mine = targets.filter(
      (t) => t.kind === reference.ref.kind && t.name === normalisedName(reference.ref),
    );
    try {
      const recreated = await pollUntil<KubeObject | { idle: true }>(
        async () => {
          const now = await scenario.kit.tryGet(child.ref);
          if (!now || now.metadata?.uid === child.uid || now.metadata?.deletionTimestamp) {
            if (
              scenario.proxy.operatorIdleMs >= GIVE_UP_IDLE_MS &&
              context.clock.now() - deletedAt >= GIVE_UP_IDLE_MS
            ) {
              return { done: true, value: { idle: true } };
            }
            return { done: false, reason: `${name} not recreated yet` };
          }
          const idle = Math.min(scenario.proxy.operatorIdleMs, context.clock.now() - deletedAt);
          return idle >= context.deps.contract.quietPeriodMs
            ? { done: true, value: now }
            : { done: false, reason: `recreated; operator wrote ${idle} ms ago` };
        },
        {
          description: `${name} to be recreated`,
          timeoutMs: context.deps.contract.timeouts.convergeMs,
          intervalMs: 100,
          signal: context.deps.signal,
        },
      );
      if ("idle" in recreated) {
        return result(
          "failed",
          `not recreated: the operator has made no write for ${GIVE_UP_IDLE_MS / 1000} s since the deletion`,
          {
            writes: scenario.operatorWrites({ after: mark }).map(writeEvidence),
            operatorLog: await scenario.operator.logTail(10),
          },
        );
      }
      const diffs = mine
        .filter((t) => !isDeepStrictEqual(valueAt(recreated, t.path), t.value))
        .map((t) => ({
          object: name,
          path: formatPath(t.path),
          expected: t.value,
          actual: valueAt(recreated, t.path),
        }));
      const evidence = {
        writes: scenario.operatorWrites({ after: mark }).map(writeEvidence),
        ...(diffs.length > 0 ? { diffs } : {}),
      };
      return diffs.length > 0
        ? result(
            "failed",
            `recreated, but ${diffs.length} managed field(s) differ from the reference`,
            evidence,
          )
        : result(
            "passed",
            `recreated (uid ${recreated.metadata?.uid ?? "?"}) as the reference has it`,
            evidence,
          );
    } catch (error) {
      if (!(error instanceof PollTimeoutError)) throw error;
      return result("failed", `not recreated within ${error.timeoutMs / 1000} s`, {
        writes: scenario.operatorWrites({ after: mark }).map(writeEvidence),
        operatorLog: await scenario.operator.logTail(10),
      });
    }
  });
}
