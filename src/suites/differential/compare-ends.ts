import { isDeepStrictEqual } from "node:util";
import { conditionsOf } from "../../contract/observed-generation.js";
import type { Contract } from "../../contract/load-contract.js";
import type { Evidence } from "../../report/report-model.js";
import type { ChildRoles } from "../../scenario/child-roles.js";
import type { LiveChild } from "../../scenario/reference-state.js";
import type { ReferenceChild, SpecReference } from "../../scenario/spec-references.js";
import { compareEndStates, endStateMatches, type EndStateComparison } from "../shared/end-state.js";
import { withoutVolatile } from "../shared/after-fault.js";

// The differential's comparison of two ends of one spec (children by role, every field the
// operator manages, condition statuses), shared by the check's two oracles (update equals
// creation, and recovery) and by the report's note on fields with no visible effect.

/** The custom resource's end, as the comparison needs it. */
export interface CustomResourceEnd {
  readonly status: unknown;
  readonly generation?: number;
}

/** The status and generation of a custom resource as the API server had it. */
export function endOf(object: { status?: unknown; metadata?: { generation?: number } }): CustomResourceEnd {
  const generation = object.metadata?.generation;
  return { status: object.status, ...(generation === undefined ? {} : { generation }) };
}

/**
 * Live children against a reference's, paired by role and compared in every
 * field the operator manages, volatile fields left out (with a note each),
 * and the two custom resources' condition statuses. Pure.
 */
export function compareEnds(
  here: { readonly children: readonly LiveChild[]; readonly status: unknown },
  reference: { readonly children: readonly ReferenceChild[]; readonly status: unknown },
  lives: { readonly roles?: ChildRoles; readonly learnedFrom: readonly ReferenceChild[] },
  contract: Pick<Contract, "drift" | "clock" | "promises">,
): {
  readonly comparison: EndStateComparison;
  readonly compared: EndStateComparison;
  readonly volatile: readonly string[];
  readonly conditions: ReturnType<typeof conditionDifferences>;
} {
  const comparison = compareEndStates(here.children, reference.children, contract.drift, {
    clockHorizonMs: contract.clock.horizonMs,
    ...(lives.roles ? { roles: lives.roles } : {}),
    fields: "operator-managed",
    learnedFrom: lives.learnedFrom,
  });
  const { compared, volatile } = withoutVolatile(comparison, contract);
  return { comparison, compared, volatile, conditions: conditionDifferences(reference.status, here.status) };
}

/**
 * Whether a generated update changed nothing visible: its reference has
 * the same children as the reference it started from, alike in every field
 * the operator manages (values generated per life aside), and the same
 * status but for the generations it names. A field with no visible effect
 * is worth a note (meant for later, or for the operand only), never a
 * verdict. `zero`: spec 0's reference, whose lives the roles come from.
 */
export function changedNothing(
  here: SpecReference,
  base: SpecReference,
  zero: SpecReference,
  contract: Pick<Contract, "drift" | "clock" | "promises">,
): boolean {
  const { compared } = compareEnds(
    { children: here.children, status: here.customResource.status },
    { children: base.children, status: base.customResource.status },
    { ...(here.roles ? { roles: here.roles } : {}), learnedFrom: zero.children },
    contract,
  );
  const certain =
    compared.unpaired.length === 0 && compared.undecided.length === 0 && compared.unlearned.length === 0;
  return (
    certain &&
    endStateMatches(compared) &&
    isDeepStrictEqual(
      withoutGenerations(here.customResource.status),
      withoutGenerations(base.customResource.status),
    )
  );
}

/** A status without what moves with every spec change alone: observedGeneration and transition times. */
function withoutGenerations(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutGenerations);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== "observedGeneration" && key !== "lastTransitionTime")
      .map(([key, v]) => [key, withoutGenerations(v)]),
  );
}

/**
 * The conditions both custom resources report with different statuses, as
 * diffs (the reference's first); the ones only one of them reports, as
 * notes: a condition's presence may follow the path (an "Upgraded"
 * condition only an update sets) and proves nothing alone. Pure.
 */
export function conditionDifferences(
  reference: unknown,
  here: unknown,
): { readonly diffs: NonNullable<Evidence["diffs"]>; readonly oneSided: readonly string[] } {
  const before = conditionsOf(reference);
  const after = conditionsOf(here);
  const diffs = before.flatMap((b) => {
    const a = after.find((c) => c.type === b.type);
    if (!a || a.status === b.status) return [];
    return [
      {
        object: "custom resource",
        path: `status.conditions[type=${b.type}].status`,
        expected: b.status,
        actual: a.status,
      },
    ];
  });
  const oneSided = [
    ...before
      .filter((b) => !after.some((a) => a.type === b.type))
      .map(
        (b) => `condition ${b.type}=${String(b.status)} only on the updated custom resource (not compared)`,
      ),
    ...after
      .filter((a) => !before.some((b) => b.type === a.type))
      .map(
        (a) => `condition ${a.type}=${String(a.status)} only on the one created with the spec (not compared)`,
      ),
  ];
  return { diffs, oneSided };
}

/** An observation's end against its reference's (compareEnds). */
export function compareObserved(
  observation: {
    readonly live: readonly LiveChild[];
    readonly customResource: { readonly status: unknown };
    readonly reference: {
      readonly children: readonly ReferenceChild[];
      readonly customResource: { readonly status: unknown };
    };
    readonly roles?: ChildRoles;
    readonly learnedFrom: readonly ReferenceChild[];
  },
  contract: Pick<Contract, "drift" | "clock" | "promises">,
): ReturnType<typeof compareEnds> {
  return compareEnds(
    { children: observation.live, status: observation.customResource.status },
    { children: observation.reference.children, status: observation.reference.customResource.status },
    {
      ...(observation.roles ? { roles: observation.roles } : {}),
      learnedFrom: observation.learnedFrom,
    },
    contract,
  );
}
