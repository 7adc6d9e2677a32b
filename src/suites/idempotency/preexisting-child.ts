import { isDeepStrictEqual } from "node:util";
import { canonicalOrder } from "../../util/keyed-lists.js";
import { evaluateReadiness, type Readiness } from "../../contract/readiness.js";
import { describeError } from "../../errors.js";
import type { KubeObject } from "../../kube/kube-client.js";
import { normalisedName } from "../../proxy/faults.js";
import { lifeReading } from "../../scenario/child-roles.js";
import { comparableValue, isPerLife } from "../../scenario/life-values.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import type { Evidence } from "../../report/report-model.js";
import { hasGivenUp } from "../../scenario/quiescence.js";
import { doneRegardless, notYet, untilQuiet } from "../../scenario/quiet-wait.js";
import { writeEvidence } from "../../scenario/reference-state.js";
import { Inconclusive } from "../../scenario/scenario.js";
import type { ReferenceChild } from "../../scenario/spec-references.js";
import { answeredChildren, forWantOfChildren, isClockChild } from "../shared/no-children.js";
import { defineCheck, type Judgement } from "../check.js";
import {
  childTargets,
  freeServicePort,
  isServicePortNumber,
  formatPath,
  shownValue,
  valueAt,
  type ChildTarget,
  type DriftTarget,
} from "../shared/drift-targets.js";
import { isStatusWrite, statusClaim, type CustomResourceKind } from "../shared/status-claims.js";

type Diffs = NonNullable<Evidence["diffs"]>;

/** A child of the reference, to create before its custom resource exists. */
/** One child of the reference of the sample. */
export type PreexistingChildTarget = ChildTarget;

/** One poll of the wait: the custom resource's readiness and the child's fields that differ. */
export interface PreexistingSample {
  readonly ready: boolean;
  readonly reason: string;
  readonly diffs: Diffs;
}

export interface PreexistingChildObservation {
  readonly name: string;
  /** The child as the write log names it. */
  readonly child: { readonly group: string; readonly resource: string; readonly name: string };
  readonly fields: readonly DriftTarget[];
  /** Managed fields left unjudged, with why (a value naming a child whose name varies with the life). */
  readonly notJudged?: readonly string[];
  /** The first poll that saw the custom resource ready while the child differed, `at` ms after the sample was created. */
  readonly readyWhileDiffering?: PreexistingSample & { readonly at: number };
  /** The last poll, when the kit stopped watching. */
  readonly last?: PreexistingSample;
  /** Every operator write of the scenario. */
  readonly writes: readonly WriteEntry[];
  readonly operatorLog: readonly string[];
}

/**
 * One scenario per child of the reference whose name is known before the
 * custom resource exists: the kit creates that child with other values and
 * no owner, then starts the operator and creates the sample. While the kit
 * watches (until the operator is ready and quiet, or has given up), the
 * custom resource must never be ready while the child still differs from
 * the reference: fixing the child first, or staying not ready (refusing a
 * child it does not own), both pass.
 */
export const preexistingChild = defineCheck<PreexistingChildTarget, PreexistingChildObservation>({
  id: "idempotency/preexisting-child",
  level: "MUST",
  summary:
    "a child that exists before its custom resource (the reference's name, other values, no owner) is never reported Ready while it differs",
  references: () => [0],
  targets: ({ contract, references }) =>
    childTargets(
      answeredChildren(references.get(0), contract),
      contract.drift,
      forWantOfChildren(
        references.get(0),
        "the operator created no child on its way to the reference: none can exist first",
      ),
      references.get(0)?.roles,
    ),
  targetName: (target) => target.name,
  skipTarget({ child, fields, role }, { contract, references }) {
    if (contract.readiness.kind === "quiet") {
      return "the contract's readiness is `quiet`: the custom resource reports no readiness to judge";
    }
    if (isClockChild(references.get(0), child)) {
      return "the operator's clock makes it, at a tick to come: its readiness does not wait for a tick, so a copy that differs before then is no Ready claim over it";
    }
    if (!child.ref.namespace) return "a cluster-scoped child is shared by every namespace's scenarios";
    if (normalisedName(child.ref) !== child.ref.name) {
      return "its name derives from the custom resource's UID, unknown before the custom resource exists";
    }
    if (role?.template) {
      return `its name varies with the custom resource's life (${role.names.join(" and ")} in two fault-free lives): unknown before the custom resource exists`;
    }
    // foreignCopy makes nothing of a child with no managed field.
    if (fields.length === 0) return "no field of it the operator manages to set otherwise";
    if (fields.every((t) => isPerLife(role?.perLife, t.path))) {
      return "every field of it the operator manages is generated once per life: none has a value to differ from";
    }
    return undefined;
  },
  observer: {
    scenario: "preexisting",
    async observe(context, { name, child, fields: managed, role }) {
      // A value generated once per life has no reference value to differ from: not set otherwise, not judged.
      const ownValues = managed.filter((t) => !isPerLife(role?.perLife, t.path));
      const spec0 = context.references.get(0);
      if (spec0?.roles?.oneLife) {
        throw new Inconclusive(
          `${spec0.roles.oneLife}: whether the name of ${name} is known before the custom resource exists, and which of its values are generated once per life, could not be learned`,
        );
      }
      const referenceReading = lifeReading(spec0?.roles, spec0?.namespace ?? "", spec0?.children ?? []);
      // Nor has a value that names a child whose name varies with the life: that name is not known
      // before the custom resource exists, nor while the kit polls.
      const namesVarying = (t: DriftTarget) =>
        !isDeepStrictEqual(
          comparableValue(t.value, t.path, referenceReading, role?.perLife),
          comparableValue(t.value, t.path, { ...referenceReading, names: [] }, role?.perLife),
        );
      const fields = ownValues.filter((t) => !namesVarying(t));
      const notJudged = ownValues
        .filter(namesVarying)
        .map((t) => `${formatPath(t.path)}: it names a child whose name varies with the life`);
      context.progress(`a pre-existing ${child.ref.kind}/${child.ref.name}`);
      const { contract } = context;
      const scenario = await context.open();
      const here = { namespace: scenario.namespace, names: [] };
      const copy = foreignCopy(child, scenario.namespace, fields);
      if (!copy) throw new Inconclusive(`nothing of ${name} to set otherwise`);
      try {
        await scenario.kit.create(copy);
      } catch (error) {
        throw new Inconclusive(`the API server refused the pre-existing ${name}: ${describeError(error)}`);
      }
      const ref = { ...child.ref, namespace: scenario.namespace };
      // Positions count in keyed lists in key order, as in the reference's children (liveChildObjects).
      const differences = (stored: KubeObject | undefined): Diffs => {
        const live = canonicalOrder(stored);
        return fields
          .filter(
            (t) =>
              !isDeepStrictEqual(
                comparableValue(valueAt(live, t.path), t.path, here, role?.perLife),
                comparableValue(t.value, t.path, referenceReading, role?.perLife),
              ),
          )
          .map((t) => ({
            object: name,
            path: formatPath(t.path),
            expected: shownValue(t.kind, t.path, t.value),
            actual: shownValue(t.kind, t.path, valueAt(live, t.path)),
          }));
      };

      context.progress(
        `${name} exists before the custom resource, with ${fields.length} field(s) set otherwise`,
      );
      await scenario.startWithSample();
      // The stimulus: the sample's creation.
      const createdAt = context.clock.now();
      let readyWhileDiffering: PreexistingChildObservation["readyWhileDiffering"];
      let last: PreexistingSample | undefined;
      await untilQuiet(scenario, {
        awaited: `the operator to settle with a pre-existing ${name}`,
        stimulusAt: createdAt,
        signal: context.deps.signal,
        observe: async (silence) => {
          const cr = await context.deps.kube.tryGet(scenario.customResource);
          const readiness = evaluateReadiness(contract.readiness, cr);
          const diffs = differences(await context.deps.kube.tryGet(ref));
          last = { ready: readiness.ready, reason: readiness.reason, diffs };
          if (readiness.ready && diffs.length > 0 && !readyWhileDiffering) {
            readyWhileDiffering = { ...last, at: context.clock.now() - createdAt };
          }
          // The rule is asked on every observation, the fact holding or not (each quiet answer is
          // a decision in the scenario's quiescence note), and a given-up operator ends the wait
          // even while it is not quiet: so this check decides quiet itself.
          const quiet = scenario.quiescence.isQuiet(silence());
          if (readiness.ready && diffs.length === 0 && quiet) return doneRegardless(undefined);
          if (readyWhileDiffering && quiet) return doneRegardless(undefined);
          if (hasGivenUp(silence())) return doneRegardless(undefined);
          return notYet(`${readiness.reason}; ${diffs.length} field(s) differ`);
        },
        // Still writing at the deadline: judged on what was seen, like a settled operator.
        atDeadline: () => undefined,
      });
      return {
        name,
        child: { group: child.group, resource: child.resource, name: child.ref.name },
        // As the kit created them: a port moved on to stay unique shows the number it got.
        fields: fields.map((t) => ({ ...t, perturbed: valueAt(copy, t.path) })),
        ...(notJudged.length > 0 ? { notJudged } : {}),
        ...(readyWhileDiffering ? { readyWhileDiffering } : {}),
        ...(last ? { last } : {}),
        writes: scenario.operatorWrites(),
        operatorLog: await scenario.operatorLog(10),
      };
    },
  },
  judge(
    { name, child, fields, notJudged = [], readyWhileDiffering, last, writes, operatorLog },
    contract,
  ): Judgement {
    const evidence: Evidence = {
      writes: writes.map(writeEvidence),
      notes: [
        `pre-existing ${name} created by the kit with: ${fields.map((t) => `${formatPath(t.path)}=${JSON.stringify(shownValue(t.kind, t.path, t.perturbed))}`).join(", ")}`,
        ...notJudged.map((why) => `not judged: ${why}`),
      ],
    };
    if (readyWhileDiffering) {
      return {
        status: "failed",
        message: `ready (${readyWhileDiffering.reason}) ${(readyWhileDiffering.at / 1000).toFixed(1)} s after the sample was created, while ${readyWhileDiffering.diffs.length} field(s) of the pre-existing child still differed from the reference`,
        evidence: { ...evidence, diffs: readyWhileDiffering.diffs, operatorLog },
      };
    }
    // The polls see states 100 ms apart; the write log sees every claim, in order.
    const claim = readyClaimBeforeRepair(writes, contract.readiness, contract.customResource, child);
    if (claim) {
      return {
        status: "failed",
        message: `status write #${claim.seq} claimed Ready before the operator's first write to the pre-existing child, which was then still the kit's copy (${fields.length} field(s) differing from the reference)`,
        evidence: { ...evidence, operatorLog },
      };
    }
    if (last?.ready) {
      return {
        status: "passed",
        message: "it fixed the pre-existing child before it reported ready",
        evidence,
      };
    }
    if (last?.diffs.length === 0) {
      return {
        status: "passed",
        message: `it fixed the pre-existing child; not ready when the kit stopped watching (${last.reason})`,
        evidence,
      };
    }
    return {
      status: "passed",
      message: `never ready while the child differed (${last?.reason ?? "?"}; ${last?.diffs.length ?? "?"} field(s) still differ): it did not take the foreign child for its own`,
      evidence,
    };
  },
});

/** Fields the API server allocates: a copy of another namespace's object must not carry them. */
const ALLOCATED: readonly (readonly (string | number)[])[] = [
  ["spec", "clusterIP"],
  ["spec", "clusterIPs"],
  ["spec", "nodeName"],
  ["spec", "volumeName"],
];

/**
 * The object the kit creates before the custom resource exists: the
 * reference's child under the same name, without owner or server-set
 * metadata, with every drift target of it set to its perturbed value.
 * Undefined when nothing of it can be made different.
 */
export function foreignCopy(
  child: ReferenceChild,
  namespace: string,
  targets: readonly DriftTarget[],
): KubeObject | undefined {
  if (targets.length === 0) return undefined;
  const copy = structuredClone(child.object) as KubeObject & { status?: unknown; spec?: unknown };
  const { name, labels, annotations } = copy.metadata ?? {};
  copy.metadata = { name, namespace, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) };
  delete copy.status;
  for (const path of ALLOCATED) removeAt(copy, path);
  for (const port of asArray(valueAt(copy, ["spec", "ports"])))
    delete (port as { nodePort?: unknown }).nodePort;
  for (const target of targets) {
    // Several ports perturbed at once must stay unique among themselves, or the server refuses the copy.
    const original = valueAt(copy, target.path);
    const value =
      child.ref.kind === "Service" && isServicePortNumber(target.path) && typeof original === "number"
        ? freeServicePort(copy, target.path, original)
        : target.perturbed;
    setAt(copy, target.path, value);
  }
  return copy;
}

/**
 * From the write log, in order: the first successful status write that
 * claims Ready (the contract's predicate on the status it sent) before the
 * operator's first effective write to the pre-existing child. Until that
 * write the child is exactly the kit's copy, which differs from the
 * reference, so such a claim is Ready over a child that differs, however
 * briefly. Undefined when the operator wrote the child first, or never
 * claimed Ready.
 */
export function readyClaimBeforeRepair(
  writes: readonly WriteEntry[],
  readiness: Readiness,
  cr: CustomResourceKind,
  child: { readonly group: string; readonly resource: string; readonly name: string },
): WriteEntry | undefined {
  for (const w of writes) {
    if (w.actor !== "operator" || w.code < 200 || w.code >= 300) continue;
    const toChild =
      !w.subresource && w.group === child.group && w.resource === child.resource && w.name === child.name;
    if (toChild && (w.effect === "changed" || w.effect === "created")) return undefined;
    if (isStatusWrite(w, cr) && statusClaim(readiness, w.body).ready) return w;
  }
  return undefined;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function removeAt(object: unknown, path: readonly (string | number)[]): void {
  const parent = valueAt(object, path.slice(0, -1));
  const key = path.at(-1);
  if (typeof parent === "object" && parent !== null && key !== undefined) {
    delete (parent as Record<string | number, unknown>)[key];
  }
}

function setAt(object: unknown, path: readonly (string | number)[], value: unknown): void {
  const parent = valueAt(object, path.slice(0, -1));
  const key = path.at(-1);
  if (typeof parent === "object" && parent !== null && key !== undefined) {
    (parent as Record<string | number, unknown>)[key] = value;
  }
}
