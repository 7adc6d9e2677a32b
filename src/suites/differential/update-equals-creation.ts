import { isDeepStrictEqual } from "node:util";
import { conditionsOf } from "../../contract/observed-generation.js";
import { sampleWithSpec, updateCount, updateName, type Contract } from "../../contract/load-contract.js";
import { describeVolatile, promisesFor, type VolatileField } from "../../contract/promises.js";
import type { Evidence } from "../../report/report-model.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import type { ChildRoles } from "../../scenario/child-roles.js";
import { Inconclusive } from "../../scenario/inconclusive.js";
import { liveChildObjects, writeEvidence, type LiveChild } from "../../scenario/reference-state.js";
import type { ReferenceChild, SpecReference } from "../../scenario/spec-references.js";
import { parsePath, pathWithin } from "../../util/object-paths.js";
import { defineCheck, type Judgement, type ObserveContext } from "../check.js";
import {
  compareEndStates,
  describeMismatch,
  endStateMatches,
  unpairedVerdict,
  type EndStateComparison,
} from "../shared/end-state.js";

/** One update: its spec (k, 1-based as messages name updates) and its name ("update 2", "generated update 3 (spec.port 9090 → 9091)"). */
interface Target {
  readonly spec: number;
  readonly name: string;
}

/** The custom resource's end, as the comparison needs it. */
export interface CustomResourceEnd {
  readonly status: unknown;
  readonly generation?: number;
}

/** A custom resource born with the spec of update `spec`, converged, beside the reference of that spec. */
export interface UpdateEqualsCreationObservation {
  readonly spec: number;
  /** How messages name the update (absent in observations recorded before generated updates: "update <spec>"). */
  readonly updateName?: string;
  /** The spec the custom resource was created with: the sample's, with updates 1..spec merged in. */
  readonly bornWith: unknown;
  /** The reference of spec `spec`: the sample created, then updated to it, each step converged. */
  readonly reference: {
    readonly children: readonly ReferenceChild[];
    readonly customResource: CustomResourceEnd;
  };
  /** The spec-0 reference's children: the lives the roles and per-life values were learned from. */
  readonly learnedFrom: readonly ReferenceChild[];
  readonly roles?: ChildRoles;
  /** The operator's children here, once converged. */
  readonly live: readonly LiveChild[];
  readonly customResource: CustomResourceEnd;
  /** The operator's writes in this scenario. */
  readonly writes: readonly WriteEntry[];
  /** How the convergence was decided (Scenario.convergedBy). */
  readonly convergedBy: readonly string[];
  readonly operatorLog: readonly string[];
  /**
   * A generated update the operator did not carry out (its reference never
   * converged on it): then `reference` is the previous spec's reference and
   * `live` where the operator came back to once the kit wrote that spec back
   * (the recovery oracle); no custom resource was born with the update.
   */
  readonly notCarriedOut?: NonNullable<SpecReference["notCarriedOut"]> & { readonly previous: string };
  /**
   * A generated update only: the custom resource born with its spec never
   * converged (why): the operator does not carry that spec out from a
   * creation, so there is nothing to compare the updated one with.
   */
  readonly bornNeverConverged?: string;
}

/**
 * Acto's differential oracle, on the operator's own two paths to one
 * desired state: a custom resource updated to spec S must end as one
 * created with spec S does. The reference of spec k (the sample created,
 * then updated k times, each converged) is compared with a custom resource
 * born with spec k in a fresh namespace: the same children, every field the
 * operator manages on either side, the same condition statuses. An operator
 * that applies a field only when it creates a child, or adds entries on an
 * update and never prunes them, passes every check that compares it with
 * its own reference; this one shows it.
 */
export const updateEqualsCreation = defineCheck<Target, UpdateEqualsCreationObservation>({
  id: "differential/update-equals-creation",
  level: "MUST",
  summary:
    "a custom resource updated to a spec ends as one created with that spec does: the same children, managed fields and condition statuses",
  references: (contract) => Array.from({ length: updateCount(contract) + 1 }, (_, spec) => spec),
  skip: (contract) =>
    updateCount(contract) === 0
      ? {
          target: "updates",
          skip: "the contract has no updates: there is no updated state to compare with a creation (add one to `updates`, or set `generatedUpdates: true`)",
        }
      : undefined,
  targets: ({ contract }) =>
    Array.from({ length: updateCount(contract) }, (_, index) => ({
      spec: index + 1,
      name: updateName(contract, index + 1),
    })),
  // A generated update is named by the field it changes, so its verdict says which.
  targetName: (target) => target.name,
  observer: {
    scenario: "born-as-update",
    scenarioOf: ({ spec }) => `born-as-update-${spec}`,
    async observe(context, { spec, name }) {
      const reference = context.references.get(spec);
      const first = context.references.get(0);
      if (!reference || !first) throw new Error(`no reference state of spec ${reference ? 0 : spec}`);
      if (reference.notCarriedOut) return recoveryObservation(context, spec, name, reference, first);
      const scenario = await context.open();
      const created = await scenario.startWithSample(spec);
      let converged;
      try {
        converged = await scenario.converge(`convergence of the sample born with ${name}'s spec`);
      } catch (error) {
        // A spec the kit made up may be one the operator rightly cannot run: no comparison, said so.
        if (spec <= context.contract.updates.length || !(error instanceof Inconclusive)) throw error;
        return {
          spec,
          updateName: name,
          bornWith: (created as { spec?: unknown }).spec,
          reference: { children: reference.children, customResource: endOf(reference.customResource) },
          learnedFrom: first.children,
          live: [],
          customResource: endOf(await scenario.kit.get(scenario.customResource)),
          writes: scenario.operatorWrites(),
          convergedBy: [],
          operatorLog: await scenario.operatorLog(10),
          bornNeverConverged: error.message,
        };
      }
      return {
        spec,
        updateName: name,
        bornWith: (created as { spec?: unknown }).spec,
        reference: {
          children: reference.children,
          customResource: endOf(reference.customResource),
        },
        learnedFrom: first.children,
        ...(reference.roles ? { roles: reference.roles } : {}),
        live: await liveChildObjects(scenario),
        customResource: endOf(converged),
        writes: scenario.operatorWrites(),
        convergedBy: [...scenario.convergedBy],
        operatorLog: await scenario.operatorLog(10),
      };
    },
  },
  judge(observation, contract): Judgement {
    if (observation.notCarriedOut) return judgeRecovery(observation, observation.notCarriedOut, contract);
    if (observation.bornNeverConverged !== undefined) {
      const update = observation.updateName ?? `update ${observation.spec}`;
      return {
        status: "skipped",
        message: `a custom resource created with ${update}'s spec never converged (${observation.bornNeverConverged}): the operator does not carry that made-up spec out from a creation, so the updated one has nothing to be compared with`,
        evidence: {
          writes: observation.writes.map(writeEvidence),
          notes: [`born with: ${JSON.stringify(observation.bornWith)}`],
          operatorLog: observation.operatorLog,
        },
      };
    }
    const { spec } = observation;
    const update = observation.updateName ?? `update ${spec}`;
    const comparison = compareEndStates(observation.live, observation.reference.children, contract.drift, {
      clockHorizonMs: contract.clock.horizonMs,
      ...(observation.roles ? { roles: observation.roles } : {}),
      fields: "operator-managed",
      learnedFrom: observation.learnedFrom,
    });
    const { compared, volatile } = withoutVolatile(comparison, contract);
    const conditions = conditionDifferences(
      observation.reference.customResource.status,
      observation.customResource.status,
    );
    const diffs = [...compared.diffs, ...conditions.diffs].map(named);
    const notes = [
      spec > contract.updates.length
        ? `the reference of ${update}: the sample created${contract.updates.length === 0 ? "" : ` with the spec of update ${contract.updates.length} (the contract's last)`}, converged, then updated with this one change and converged; here the sample was created with ${update}'s spec from the start`
        : `the reference of ${update}: the sample created, then updated ${spec} time(s), each converged; here the sample was created with ${update}'s spec from the start`,
      `born with: ${JSON.stringify(observation.bornWith)}`,
      ...specAsks(diffs, observation.bornWith),
      ...volatile,
      ...conditions.oneSided,
      ...observation.convergedBy.map((line) => `converged: ${line}`),
      ...comparison.clockMade,
    ];
    const evidence: Evidence = {
      writes: observation.writes.map(writeEvidence),
      ...(diffs.length > 0 ? { diffs } : {}),
      notes,
    };
    if (!endStateMatches(compared) || conditions.diffs.length > 0) {
      const parts = [
        ...(endStateMatches(compared) ? [] : [describeMismatch(compared)]),
        ...(conditions.diffs.length > 0
          ? [`${conditions.diffs.length} condition(s) with another status than the reference's`]
          : []),
      ];
      const refusal = statedRefusal(
        observation.reference.customResource.status,
        observation.customResource.status,
      );
      return {
        status: "failed",
        message: `created with ${update}'s spec, it ended unlike the custom resource updated to it: ${parts.join("; ")}${refusal ? `; ${refusal}` : ""}`,
        evidence: { ...evidence, operatorLog: observation.operatorLog },
      };
    }
    if (compared.unlearned.length > 0) {
      return {
        status: "inconclusive",
        message: `${compared.unlearned.map((d) => `${d.object} ${d.path}`).join(", ")} differ from the updated custom resource's, at fields the two fault-free lives of the sample never had: a value generated once per life there cannot be told from a wrong one`,
        evidence: { ...evidence, diffs: [...diffs, ...compared.unlearned.map(named)] },
      };
    }
    const unsure = unpairedVerdict(compared, evidence);
    if (unsure) return unsure;
    const children = compared.children.length;
    return {
      status: "passed",
      message: `created with ${update}'s spec, it ended as the custom resource updated to it: ${children} child(ren) alike in every field it manages, and the same condition statuses`,
      evidence,
    };
  },
});

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
  const comparison = compareEndStates(here.children, base.children, contract.drift, {
    clockHorizonMs: contract.clock.horizonMs,
    ...(here.roles ? { roles: here.roles } : {}),
    fields: "operator-managed",
    learnedFrom: zero.children,
  });
  const { compared } = withoutVolatile(comparison, contract);
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
 * The observation of a generated update its reference did not carry out:
 * the previous spec's reference beside where the operator came back to,
 * with no life of its own (nothing could be born at a spec the operator
 * does not converge on).
 */
function recoveryObservation(
  context: ObserveContext,
  spec: number,
  name: string,
  reference: SpecReference,
  first: SpecReference,
): UpdateEqualsCreationObservation {
  const previousSpec = context.contract.updates.length;
  const previous = context.references.get(previousSpec);
  if (!previous || !reference.notCarriedOut) throw new Error(`no reference state of spec ${previousSpec}`);
  return {
    spec,
    updateName: name,
    bornWith: sampleWithSpec(context.contract, spec).spec,
    reference: { children: previous.children, customResource: endOf(previous.customResource) },
    learnedFrom: first.children,
    ...(reference.roles ? { roles: reference.roles } : {}),
    live: reference.children,
    customResource: endOf(reference.customResource),
    writes: reference.writes,
    convergedBy: [],
    operatorLog: [],
    notCarriedOut: {
      ...reference.notCarriedOut,
      previous: previousSpec === 0 ? "the sample" : updateName(context.contract, previousSpec),
    },
  };
}

/**
 * Acto's recovery oracle, for an update the operator did not carry out:
 * the previous spec written back must bring it back to that spec's
 * reference (the same children, managed fields and condition statuses).
 * Not carrying a made-up update out is no failure by itself (the schema may
 * allow what the operator rightly refuses); not coming back from it is.
 */
function judgeRecovery(
  observation: UpdateEqualsCreationObservation,
  notCarriedOut: NonNullable<UpdateEqualsCreationObservation["notCarriedOut"]>,
  contract: Contract,
): Judgement {
  const update = observation.updateName ?? `update ${observation.spec}`;
  const didNot = `the operator did not carry ${update} out (${notCarriedOut.why})`;
  const notes = [
    `the reference wrote ${update} and never converged on it; the kit then wrote back the spec of ${notCarriedOut.previous} and compared where the operator came back to with the reference of ${notCarriedOut.previous}`,
    `born with (never created: the operator does not converge on it): ${JSON.stringify(observation.bornWith)}`,
  ];
  const writes = observation.writes.map(writeEvidence);
  if (notCarriedOut.notRecovered !== undefined) {
    return {
      status: "failed",
      message: `${didNot}, and with the spec of ${notCarriedOut.previous} written back it did not converge again: ${notCarriedOut.notRecovered}`,
      evidence: { writes, notes },
    };
  }
  const comparison = compareEndStates(observation.live, observation.reference.children, contract.drift, {
    clockHorizonMs: contract.clock.horizonMs,
    ...(observation.roles ? { roles: observation.roles } : {}),
    fields: "operator-managed",
    learnedFrom: observation.learnedFrom,
  });
  const { compared, volatile } = withoutVolatile(comparison, contract);
  const conditions = conditionDifferences(
    observation.reference.customResource.status,
    observation.customResource.status,
  );
  const diffs = [...compared.diffs, ...conditions.diffs].map((d) => ({
    ...d,
    sides: { expected: `the reference of ${notCarriedOut.previous}`, actual: "come back to it" },
  }));
  const evidence: Evidence = {
    writes,
    notes: [...notes, ...volatile],
    ...(diffs.length > 0 ? { diffs } : {}),
  };
  if (!endStateMatches(compared) || conditions.diffs.length > 0) {
    return {
      status: "failed",
      message: `${didNot}, and with the spec of ${notCarriedOut.previous} written back it did not come back to that spec's reference: ${endStateMatches(compared) ? `${conditions.diffs.length} condition(s) with another status` : describeMismatch(compared)}`,
      evidence,
    };
  }
  const unsure = unpairedVerdict(compared, evidence);
  if (unsure) return unsure;
  return {
    status: "passed",
    message: `${didNot}: no update-equals-creation verdict on it; with the spec of ${notCarriedOut.previous} written back it came back to that spec's reference (${compared.children.length} child(ren) alike, the same condition statuses)`,
    evidence,
  };
}

/** The two sides of a differential diff, by what they are: the reference was updated, this one created. */
const SIDES = { expected: "updated to the spec", actual: "created with the spec" } as const;

function named<D extends NonNullable<Evidence["diffs"]>[number]>(diff: D): D {
  return { ...diff, sides: SIDES };
}

/**
 * For each diff whose one side holds a value the spec names (a scalar of
 * the spec equal to it, the other side's not), which side the spec asks
 * for: "spec.port is 9091: the side created with the spec has it". Pure.
 */
export function specAsks(diffs: NonNullable<Evidence["diffs"]>, spec: unknown): string[] {
  const named = scalarPaths(spec, "spec");
  return diffs.flatMap((diff) => {
    for (const [side, value, other] of [
      [SIDES.actual, diff.actual, diff.expected],
      [SIDES.expected, diff.expected, diff.actual],
    ] as const) {
      if (value === undefined || isDeepStrictEqual(value, other)) continue;
      const field = named.find(([, v]) => isDeepStrictEqual(v, value));
      if (field && !named.some(([, v]) => isDeepStrictEqual(v, other))) {
        return [
          `${diff.object} ${diff.path}: the spec asks for ${JSON.stringify(value)} (${field[0]}); the side ${side} has it`,
        ];
      }
    }
    return [];
  });
}

function scalarPaths(value: unknown, at: string): [string, unknown][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => scalarPaths(v, `${at}[${i}]`));
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([k, v]) => scalarPaths(v, `${at}.${k}`));
  }
  return [[at, value]];
}

/**
 * What the operator itself said on the updated path when it did not carry
 * the update out: a condition False there that is not False on the custom
 * resource created with the spec (ReconcileSuccess=False, reason
 * UnsupportedOperation). A refusal by design is the operator's to state and
 * the user's to waive; the verdict says so rather than leave it to be
 * debugged. Undefined when there is none. Pure.
 */
export function statedRefusal(updated: unknown, created: unknown): string | undefined {
  const born = conditionsOf(created);
  const refusals = conditionsOf(updated).filter(
    (c) => c.status === "False" && born.find((b) => b.type === c.type)?.status !== "False",
  );
  if (refusals.length === 0) return undefined;
  const said = refusals.map((c) => {
    const { reason, message } = c as { reason?: unknown; message?: unknown };
    const why = [reason, message].filter((t): t is string => typeof t === "string" && t !== "").join(": ");
    return `${c.type}=False${why ? ` (${why})` : ""}`;
  });
  return `the operator itself reported not carrying the update out on the updated path: ${said.join(", ")}; if it refuses this change by design, waive this verdict with that reason`;
}

function endOf(object: { status?: unknown; metadata?: { generation?: number } }): CustomResourceEnd {
  const generation = object.metadata?.generation;
  return { status: object.status, ...(generation === undefined ? {} : { generation }) };
}

/**
 * The comparison without the differences in fields the contract declares
 * volatile for their object (a timestamp the operator rewrites on purpose
 * differs between any two lives), and a note for each left out. Pure.
 */
export function withoutVolatile(
  comparison: EndStateComparison,
  contract: Pick<Contract, "promises">,
): { readonly compared: EndStateComparison; readonly volatile: readonly string[] } {
  const notes: string[] = [];
  const volatileField = (diff: { object: string; path: string }): VolatileField | undefined => {
    const [kind = "", ...name] = diff.object.split("/");
    const fields = promisesFor(contract.promises, kind, name.join("/")).volatile;
    let path;
    try {
      path = parsePath(diff.path);
    } catch {
      return undefined;
    }
    return fields.find((f) => pathWithin(path, f.path));
  };
  const keep = (diffs: EndStateComparison["diffs"]) =>
    diffs.filter((diff) => {
      const field = volatileField(diff);
      if (field)
        notes.push(`not compared: ${diff.object} ${diff.path}, volatile: ${describeVolatile([field])}`);
      return field === undefined;
    });
  return {
    compared: {
      ...comparison,
      diffs: keep(comparison.diffs),
      undecided: keep(comparison.undecided),
      unlearned: keep(comparison.unlearned),
    },
    volatile: notes,
  };
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
