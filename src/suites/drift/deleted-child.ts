import { isDeepStrictEqual } from "node:util";
import { canonicalOrder } from "../../util/keyed-lists.js";
import { describeError } from "../../errors.js";
import type { KubeObject } from "../../kube/kube-client.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import { childOfRole, lifeReading } from "../../scenario/child-roles.js";
import { comparableValue, isPerLife, type LifeReading, type ValuePath } from "../../scenario/life-values.js";
import { GIVE_UP_IDLE_MS, hasGivenUp, silentFor } from "../../scenario/quiescence.js";
import { doneRegardless, holds, notYet, untilQuiet } from "../../scenario/quiet-wait.js";
import { liveChildren, writeEvidence } from "../../scenario/reference-state.js";
import { Inconclusive } from "../../scenario/scenario.js";
import { answeredChildren, forWantOfChildren, isClockChild } from "../shared/no-children.js";
import { defineCheck, type Judgement } from "../check.js";
import {
  childTargets,
  formatPath,
  shownValue,
  valueAt,
  type ChildTarget,
  type DriftTarget,
} from "../shared/drift-targets.js";

/** One child of the reference of the sample. */
export type DeletedChildTarget = ChildTarget;

/** How the wait for the recreation ended. */
export type Recreation =
  /** The convergence deadline passed first, the operator still writing. */
  | { readonly outcome: "timeout"; readonly timeoutMs: number; readonly lastReason: string }
  /** Not recreated, and the operator silent so long it is not going to. */
  | { readonly outcome: "gave-up" }
  | { readonly outcome: "recreated"; readonly object: KubeObject };

export interface DeletedChildObservation {
  readonly name: string;
  readonly fields: readonly DriftTarget[];
  /** Values the reference's two lives show the child generates once per life: a recreation generates them anew. */
  readonly perLife?: readonly ValuePath[];
  /**
   * How the reference's values and this life's read across lives (UIDs, the
   * namespace, life-dependent names); absent in observations recorded before
   * them, whose values compare as they are.
   */
  readonly readings?: { readonly reference: LifeReading; readonly here: LifeReading };
  /** Why the reference has one life only (ChildRoles.oneLife): no value is known to be generated per life. */
  readonly oneLife?: string;
  /** Set when the operator's clock made the child (a tick's): its values are its tick's, not the reference's. */
  readonly ofClock?: true;
  readonly recreation: Recreation;
  /** The operator's writes after the deletion. */
  readonly writes: readonly WriteEntry[];
  readonly operatorLog: readonly string[];
}

/**
 * One scenario per child of the reference: the sample converges, the kit
 * deletes the child, and the operator must create it again as the
 * reference has it.
 */
export const deletedChild = defineCheck<DeletedChildTarget, DeletedChildObservation>({
  id: "drift/deleted-child",
  level: "MUST",
  summary: "a deleted child is recreated as the reference has it",
  references: () => [0],
  targets: ({ contract, references }) =>
    childTargets(
      answeredChildren(references.get(0), contract),
      contract.drift,
      forWantOfChildren(
        references.get(0),
        "the operator created no child on its way to the reference: nothing to delete",
      ),
      references.get(0)?.roles,
    ),
  targetName: (target) => target.name,
  observer: {
    scenario: "drift-deleted",
    async observe(context, { name, child: reference, fields, role }) {
      context.progress(`deleting ${reference.ref.kind}/${reference.ref.name}`);
      const scenario = await context.open();
      await scenario.startWithSample();
      await scenario.converge("convergence of the sample");
      const spec0 = context.references.get(0);
      const roles = spec0?.roles;
      const live = await liveChildren(scenario);
      const readings = {
        reference: lifeReading(roles, spec0?.namespace ?? "", spec0?.children ?? []),
        here: lifeReading(roles, scenario.namespace, live),
      };
      const child = childOfRole(roles, live, reference.ref.kind, reference.ref.name);
      if (child === "ambiguous") {
        throw new Inconclusive(
          `more than one child here has the role of ${name}: which to delete cannot be told`,
        );
      }
      if (!child) throw new Inconclusive(`${name} does not exist in this scenario's converged state`);
      const mark = scenario.proxy.writeLog.lastSeq;
      try {
        await scenario.kit.delete(child.ref, { propagationPolicy: "Background" });
      } catch (error) {
        throw new Inconclusive(`the API server refused the deletion of ${name}: ${describeError(error)}`);
      }
      const deletedAt = context.clock.now();
      const { value: recreation } = await untilQuiet<Recreation>(scenario, {
        awaited: `${name} to be recreated`,
        stimulusAt: deletedAt,
        signal: context.deps.signal,
        observe: async (silence) => {
          const now = await scenario.kit.tryGet(child.ref);
          if (!now || now.metadata?.uid === child.uid || now.metadata?.deletionTimestamp) {
            if (hasGivenUp(silence())) return doneRegardless({ outcome: "gave-up" });
            return notYet(`${name} not recreated yet`);
          }
          return holds(
            { outcome: "recreated", object: now },
            (s) => `recreated; operator wrote ${silentFor(s)} ms ago`,
          );
        },
        atDeadline: ({ timeoutMs, lastReason }) => ({ outcome: "timeout", timeoutMs, lastReason }),
      });
      return {
        name,
        fields,
        ...(role && role.perLife.length > 0 ? { perLife: role.perLife } : {}),
        readings,
        ...(roles?.oneLife ? { oneLife: roles.oneLife } : {}),
        ...(isClockChild(spec0, reference) ? { ofClock: true as const } : {}),
        recreation,
        writes: scenario.operatorWrites({ after: mark }),
        operatorLog: await scenario.operatorLog(10),
      };
    },
  },
  judge({
    name,
    fields,
    perLife = [],
    readings,
    oneLife,
    ofClock,
    recreation,
    writes,
    operatorLog,
  }): Judgement {
    const shown = writes.map(writeEvidence);
    if (recreation.outcome === "gave-up") {
      return {
        status: "failed",
        message: `not recreated: the operator has made no write for ${GIVE_UP_IDLE_MS / 1000} s since the deletion`,
        evidence: { writes: shown, operatorLog },
      };
    }
    if (recreation.outcome === "timeout") {
      // A deadline is no evidence: the operator was still writing when the time ran out.
      return {
        status: "inconclusive",
        message: `no verdict within ${recreation.timeoutMs / 1000} s of the deletion: the operator was still writing at the deadline (last seen: ${recreation.lastReason})`,
        evidence: { writes: shown, operatorLog },
      };
    }
    const recreated = recreation.object;
    if (ofClock) {
      return {
        status: "passed",
        message: `recreated (uid ${recreated.metadata?.uid ?? "?"})`,
        evidence: {
          writes: shown,
          notes: [
            `not compared with the reference: the operator's clock made ${name}, and the reference's holds another tick's values`,
          ],
        },
      };
    }
    // Positions count in keyed lists in key order, as in the reference's children (liveChildObjects).
    const values = canonicalOrder(recreated);
    const generated = fields.filter((t) => isPerLife(perLife, t.path));
    // Each life's values as lives compare them: a DNS name with this namespace in it is the reference's.
    const same = (t: DriftTarget) =>
      readings
        ? isDeepStrictEqual(
            comparableValue(valueAt(values, t.path), t.path, readings.here, perLife),
            comparableValue(t.value, t.path, readings.reference, perLife),
          )
        : isDeepStrictEqual(valueAt(values, t.path), t.value);
    const diffs = fields
      .filter((t) => !generated.includes(t))
      .filter((t) => !same(t))
      .map((t) => ({
        object: name,
        path: formatPath(t.path),
        expected: shownValue(t.kind, t.path, t.value),
        actual: shownValue(t.kind, t.path, valueAt(values, t.path)),
      }));
    const evidence = {
      writes: shown,
      ...(diffs.length > 0 ? { diffs } : {}),
      ...(generated.length > 0
        ? {
            notes: [
              `not compared with the reference: ${generated.map((t) => formatPath(t.path)).join(", ")}, generated once per life (two fault-free lives differ there), generated anew with the object`,
            ],
          }
        : {}),
    };
    if (diffs.length > 0 && oneLife) {
      return {
        status: "inconclusive",
        message: `recreated, but ${diffs.length} managed field(s) differ from the reference, and with one reference life (${oneLife}) the kit cannot tell a value generated once per life from a wrong one`,
        evidence,
      };
    }
    return diffs.length > 0
      ? {
          status: "failed",
          message: `recreated, but ${diffs.length} managed field(s) differ from the reference`,
          evidence,
        }
      : {
          status: "passed",
          message: `recreated (uid ${recreated.metadata?.uid ?? "?"}) as the reference has it`,
          evidence,
        };
  },
});
