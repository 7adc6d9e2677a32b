import { randomBytes } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { describeError } from "../../errors.js";
import type { KubeObject } from "../../kube/kube-client.js";
import { isEffective } from "../../proxy/write-effect.js";
import { canonicalOrder, relocated } from "../../util/keyed-lists.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import { lifeReading, roleByKey, roleKey, roleOf } from "../../scenario/child-roles.js";
import { comparableValue, isPerLife } from "../../scenario/life-values.js";
import { hasGivenUp, silentFor, GIVE_UP_IDLE_MS } from "../../scenario/quiescence.js";
import { doneRegardless, holds, notYet, untilQuiet } from "../../scenario/quiet-wait.js";
import {
  describeRef,
  liveChildren,
  writeEvidence,
  type ChildRecord,
} from "../../scenario/reference-state.js";
import { Inconclusive } from "../../scenario/scenario.js";
import { answeredChildren, forWantOfChildren, isClockChild } from "../shared/no-children.js";
import { defineCheck, type Judgement } from "../check.js";
import {
  childTargets,
  driftPatch,
  formatPath,
  shownValue,
  valueAt,
  type DriftTarget,
} from "../shared/drift-targets.js";
import { ObjectKinds } from "../shared/promised.js";

/** The foreign metadata the kit adds with every perturbation: it must survive the repair. */
export const FOREIGN_ANNOTATION = "reconcile-conformance.dev/foreign-annotation";
export const FOREIGN_LABEL = "reconcile-conformance.dev/foreign-label";

/** More effective writes than this to one object to repair one field is a write per reconcile, not a repair. */
const REPAIR_WRITE_BOUND = 3;

/** How the wait for the repair ended. */
export type Repair =
  /** The convergence deadline passed first, the operator still writing. */
  | { readonly outcome: "timeout"; readonly timeoutMs: number; readonly lastReason: string }
  /** Not restored, and the operator silent so long it is not going to; the value as evidence shows it. */
  | { readonly outcome: "gave-up"; readonly value: unknown }
  /** Restored, and the operator quiet since. */
  | { readonly outcome: "restored"; readonly object: KubeObject };

export interface ManagedFieldObservation {
  readonly target: DriftTarget;
  /** The child as it was before the perturbation. */
  readonly child: ChildRecord;
  /** The value of the foreign annotation and label the perturbation added. */
  readonly nonce: string;
  readonly repair: Repair;
  /** The operator's writes to the child after the perturbation. */
  readonly writes: readonly WriteEntry[];
  readonly operatorLog: readonly string[];
}

/**
 * One scenario per target: the sample converges in a fresh namespace, the
 * kit changes one managed field of one child (and adds a foreign annotation
 * and label in the same write), and the operator must put the field back by
 * updating that object, keeping the foreign metadata.
 */
export const managedField = defineCheck<DriftTarget, ManagedFieldObservation>({
  id: "drift/managed-field",
  level: "MUST",
  summary:
    "a managed field of a child changed behind the operator's back is repaired in place, keeping foreign metadata",
  references: () => [0],
  targets({ contract, references }) {
    const reference = references.get(0);
    const children = childTargets(
      answeredChildren(reference, contract),
      contract.drift,
      "",
      reference?.roles,
    );
    const targets = Array.isArray(children) ? children.flatMap((child) => child.fields) : [];
    return targets.length > 0
      ? targets
      : {
          target: "children",
          skip:
            answeredChildren(reference, contract).length === 0
              ? forWantOfChildren(reference, "the operator created no child on its way to the reference")
              : "no managed field of any child to perturb",
        };
  },
  targetName: (target) => target.id,
  skipTarget(target, { references }) {
    const role = roleByKey(references.get(0)?.roles, `${target.kind}/${target.name}`);
    return isPerLife(role?.perLife, target.path)
      ? `${formatPath(target.path)} is generated once per life (two fault-free lives differ there): the operator has no record of a value changed behind its back to restore, only the promise to keep its own (judged where a crash or restart could regenerate it)`
      : undefined;
  },
  observer: {
    scenario: "drift-field",
    async observe(context, referenceTarget) {
      context.progress(`perturbing ${referenceTarget.id}`);
      const scenario = await context.open();
      await scenario.startWithSample();
      await scenario.converge("convergence of the sample");
      const reference = context.references.get(0);
      const roles = reference?.roles;
      const key = `${referenceTarget.kind}/${referenceTarget.name}`;
      const children = await liveChildren(scenario);
      const ofRole = children.filter(
        (c) => c.ref.kind === referenceTarget.kind && roleKey(roles, c.ref.kind, c.ref.name) === key,
      );
      if (ofRole.length > 1) {
        throw new Inconclusive(
          `${ofRole.map((c) => describeRef(c.ref)).join(" and ")} both have the role of ${key}: which to perturb cannot be told`,
        );
      }
      const [child] = ofRole;
      if (!child) {
        throw new Inconclusive(`${key} does not exist in this scenario's converged state`);
      }
      // Positions count in the child's keyed lists in key order (liveChildObjects): the target's
      // element is found by its key here, then patched where it is in the stored object.
      const stored = await scenario.kit.get(child.ref);
      const live = canonicalOrder(stored);
      const shown = (value: unknown) => shownValue(referenceTarget.kind, referenceTarget.path, value);
      // The value to restore is this life's: the reference's as this life reads it (its UIDs,
      // namespace and names), or, for a value generated once per life, whatever this life generated.
      const referenceChild = reference?.children.find(
        (c) => c.ref.kind === referenceTarget.kind && roleKey(roles, c.ref.kind, c.ref.name) === key,
      );
      const role = roleOf(roles, child.ref.kind, child.ref.name);
      const perLife = role.status === "role" && isPerLife(role.role.perLife, referenceTarget.path);
      const perLifeValues = role.status === "role" ? role.role.perLife : undefined;
      const sameInThisLife =
        referenceChild !== undefined &&
        isDeepStrictEqual(
          comparableValue(
            valueAt(live, referenceTarget.path),
            referenceTarget.path,
            lifeReading(roles, scenario.namespace, children),
            perLifeValues,
          ),
          comparableValue(
            valueAt(referenceChild.object, referenceTarget.path),
            referenceTarget.path,
            lifeReading(roles, reference?.namespace ?? "", reference?.children ?? []),
            perLifeValues,
          ),
        );
      // A tick's child holds its own tick's values (its time), never the reference's tick's: the
      // value to restore is this life's, as for a value generated once per life.
      const ofClock = referenceChild !== undefined && isClockChild(reference, referenceChild);
      if (
        !perLife &&
        !ofClock &&
        !sameInThisLife &&
        !isDeepStrictEqual(valueAt(live, referenceTarget.path), referenceTarget.value)
      ) {
        throw new Inconclusive(
          `${referenceTarget.id} is ${JSON.stringify(shown(valueAt(live, referenceTarget.path)))} here, not the reference's ${JSON.stringify(shown(referenceTarget.value))}`,
        );
      }
      const target: DriftTarget = { ...referenceTarget, value: valueAt(live, referenceTarget.path) };
      const storedAt = relocated(target.path, live, stored);
      if (!storedAt) throw new Inconclusive(`${target.id} is not in ${describeRef(child.ref)} here`);
      const nonce = randomBytes(4).toString("hex");
      const mark = scenario.proxy.writeLog.lastSeq;
      try {
        await scenario.kit.patchJson(
          child.ref,
          driftPatch({ ...target, path: storedAt }, stored, {
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
      const { value: repair } = await untilQuiet<Repair>(scenario, {
        awaited: `${target.id} to be repaired`,
        stimulusAt: perturbedAt,
        signal: context.deps.signal,
        observe: async (silence) => {
          const now = await scenario.kit.tryGet(child.ref);
          if (!now) return notYet(`${describeRef(child.ref)} is gone`);
          const value = valueAt(canonicalOrder(now), target.path);
          if (!isDeepStrictEqual(value, target.value)) {
            // Recorded as shown: a Secret's value never reaches the observation or a message.
            if (hasGivenUp(silence())) return doneRegardless({ outcome: "gave-up", value: shown(value) });
            return notYet(`${formatPath(target.path)} is ${JSON.stringify(shown(value))}`);
          }
          return holds(
            { outcome: "restored", object: now },
            (s) => `restored; operator wrote ${silentFor(s)} ms ago`,
          );
        },
        atDeadline: ({ timeoutMs, lastReason }) => ({ outcome: "timeout", timeoutMs, lastReason }),
      });
      const writes = scenario
        .operatorWrites({ after: mark })
        .filter((e) => e.group === child.group && e.resource === child.resource && e.name === child.ref.name);
      return { target, child, nonce, repair, writes, operatorLog: await scenario.operatorLog(10) };
    },
  },
  judge({ target, child, nonce, repair, writes, operatorLog }, contract): Judgement {
    const shownWrites = writes.map(writeEvidence);
    const shown = (value: unknown) => shownValue(target.kind, target.path, value);
    if (repair.outcome === "timeout") {
      // A deadline is no evidence: the operator was still writing when the time ran out.
      return {
        status: "inconclusive",
        message: `no verdict within ${repair.timeoutMs / 1000} s of the perturbation: the operator was still writing at the deadline (last seen: ${repair.lastReason})`,
        evidence: { writes: shownWrites, operatorLog },
      };
    }
    if (repair.outcome === "gave-up") {
      return {
        status: "failed",
        message: `not repaired: ${formatPath(target.path)} is still ${JSON.stringify(repair.value)}, and the operator has made no write for ${GIVE_UP_IDLE_MS / 1000} s since the perturbation`,
        evidence: {
          diffs: [
            {
              object: describeRef(child.ref),
              path: formatPath(target.path),
              expected: shown(target.value),
              actual: repair.value,
            },
          ],
          writes: shownWrites,
          operatorLog,
        },
      };
    }
    const repaired = repair.object;
    const effective = writes.filter(isEffective);
    const recreated =
      repaired.metadata?.uid === child.uid
        ? undefined
        : `repaired by recreating ${describeRef(child.ref)} (uid ${child.uid} -> ${repaired.metadata?.uid ?? "?"}), not by an update in place`;
    // A child whose contract entry does not promise `uid` may be recreated: the rest is still judged.
    const recreationAllowed =
      recreated &&
      new ObjectKinds(contract, [child]).withdrawn(
        { group: child.group, resource: child.resource, name: child.ref.name },
        "uid",
      );
    const evidence = {
      writes: shownWrites,
      ...(recreationAllowed ? { notes: [`not counted: ${recreated}: ${recreationAllowed}`] } : {}),
    };
    if (recreated && !recreationAllowed) return { status: "failed", message: recreated, evidence };
    const lost = [
      repaired.metadata?.annotations?.[FOREIGN_ANNOTATION] === nonce
        ? undefined
        : `annotation ${FOREIGN_ANNOTATION}`,
      repaired.metadata?.labels?.[FOREIGN_LABEL] === nonce ? undefined : `label ${FOREIGN_LABEL}`,
    ].filter((x): x is string => x !== undefined);
    if (lost.length > 0) {
      return {
        status: "failed",
        message: `repaired, but another writer's ${lost.join(" and ")} was erased`,
        evidence,
      };
    }
    if (effective.length > REPAIR_WRITE_BOUND) {
      return {
        status: "failed",
        message: `repaired with ${effective.length} effective writes to ${describeRef(child.ref)} (a repair takes at most ${REPAIR_WRITE_BOUND})`,
        evidence,
      };
    }
    return {
      status: "passed",
      message: `repaired ${recreationAllowed ? "by recreating it, as the contract allows," : "in place"} by ${effective.length} write(s); foreign metadata kept`,
      evidence,
    };
  },
});
