import { isDeepStrictEqual } from "node:util";
import { conditionsOf } from "../../contract/observed-generation.js";
import { updateCount, updateName } from "../../contract/spec-path.js";
import type { Evidence } from "../../report/report-model.js";
import { Inconclusive } from "../../scenario/inconclusive.js";
import { liveChildObjects, writeEvidence } from "../../scenario/reference-state.js";
import { defineCheck, type Judgement } from "../check.js";
import { describeMismatch, endStateMatches, unpairedVerdict } from "../shared/end-state.js";
import { compareObserved, endOf } from "./compare-ends.js";
import type { UpdateEqualsCreationObservation } from "./observation.js";
import { judgeRecovery, recoveryObservation } from "./recovery.js";

/** One update: its spec (k, 1-based as messages name updates) and its name ("update 2", "generated update 3 (spec.port 9090 → 9091)"). */
interface Target {
  readonly spec: number;
  readonly name: string;
}

export type { UpdateEqualsCreationObservation } from "./observation.js";

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
    const { comparison, compared, volatile, conditions } = compareObserved(observation, contract);
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
