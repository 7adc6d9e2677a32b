import { isDeepStrictEqual } from "node:util";
import { servingSchema, type Contract } from "../contract/load-contract.js";
import { sampleWithSpec, updateName, type GeneratedUpdate } from "../contract/spec-path.js";
import {
  chooseCandidates,
  fieldName,
  specCandidates,
  valueShowsIn,
  type FieldLeftAlone,
  type SpecCandidate,
} from "../contract/spec-candidates.js";
import { describeError } from "../errors.js";
import type { KubeClient, KubeObject } from "../kube/kube-client.js";
import type { ExplorationReport } from "../report/report-model.js";
import type { Limiter } from "../util/limiter.js";
import { applyMergePatch, asRecord } from "../util/records.js";
import { dryRunUnsupported } from "../webhooks/webhook-refusals.js";
import { Scenario, type ScenarioDeps } from "./scenario.js";
import type { SpecReference } from "./spec-references.js";

// Spec exploration at run time: the candidates spec-candidates.ts makes up from the CRD's schema,
// each created in a dry run by the API server (its schema, CEL rules and the operator's webhooks),
// then ranked by what the reference shows and chosen under the contract's budget. Only what the
// server accepts and keeps becomes a generated update: a refusal is listed, never a verdict.

/** A candidate the API server accepted, or why it was dropped. */
export type Checked =
  | { readonly candidate: SpecCandidate; readonly accepted: true; readonly unchecked?: string }
  | { readonly candidate: SpecCandidate; readonly accepted: false; readonly reason: string };

/**
 * The contract with its generated updates chosen (`generatedUpdates`), and
 * what the exploration did, for the report. `reference0` gives spec 0's
 * reference for the ranking (undefined when it could not be computed: no
 * ranking, the seed's order alone).
 */
export async function exploreSpec(
  contract: Contract & { readonly exploration: NonNullable<Contract["exploration"]> },
  deps: ScenarioDeps,
  options: {
    readonly slots: Limiter;
    readonly reference0: () => Promise<SpecReference | undefined>;
    readonly progress: (line: string) => void;
  },
): Promise<{ readonly contract: Contract; readonly report: ExplorationReport }> {
  const { max, seed } = contract.exploration;
  const base = sampleWithSpec(contract, contract.updates.length);
  const from =
    contract.updates.length === 0 ? "the sample's spec" : `the spec of update ${contract.updates.length}`;
  options.progress(
    `exploring the spec: making up changes of ${from} from the CRD's schema, each checked in a dry run`,
  );
  const schema = asRecord(
    asRecord(
      servingSchema(
        contract.crds.map((c) => c.object),
        contract.customResource,
      ).properties,
    ).spec,
  );
  const checked = await options.slots.run(() => dryRunCandidates(contract, deps, base, schema));
  if ("refusedBase" in checked) {
    options.progress(
      `exploring the spec: none, the API server refused ${from} in a dry run: ${checked.refusedBase}`,
    );
    return {
      contract,
      report: {
        max,
        seed,
        candidates: 0,
        chosen: [],
        refused: [],
        leftAlone: [],
        baseRefused: checked.refusedBase,
      },
    };
  }
  // Ranked by what the reference's children show: outside the slot, since it may still be computed.
  const reference = await options.reference0().catch(() => undefined);
  const children = reference?.children.map((c) => c.object) ?? [];
  const results = checked.results.map((c) => withoutReadinessField(c, contract.readiness));
  const accepted = results.flatMap((c) => (c.accepted ? [c.candidate] : []));
  const chosen = chooseCandidates(accepted, {
    budget: max,
    seed,
    shows: (c) => valueShowsIn(contract.sample.object, c.path, children),
  });
  const generatedUpdates: GeneratedUpdate[] = chosen.map((c) => ({
    patch: c.patch,
    description: c.description,
    field: fieldName(c.path),
  }));
  const explored: Contract = { ...contract, generatedUpdates };
  const names = generatedUpdates.map((_, i) => updateName(explored, contract.updates.length + i + 1));
  const refused = results.flatMap((c) =>
    c.accepted ? [] : [{ update: c.candidate.description, reason: c.reason }],
  );
  const unchecked = results.flatMap((c) =>
    c.accepted && c.unchecked !== undefined ? [`${c.candidate.description}: ${c.unchecked}`] : [],
  );
  options.progress(
    `exploring the spec: ${checked.results.length} candidate(s), ${refused.length} refused or changing nothing, ${checked.leftAlone.length} field(s) left alone; ${names.length} chosen (at most ${max}, seed ${seed})${reference ? "" : ", unranked: the reference of the sample did not converge"}`,
  );
  for (const name of names) options.progress(`exploring the spec: ${name}`);
  return {
    contract: explored,
    report: {
      max,
      seed,
      candidates: checked.results.length,
      chosen: names,
      refused,
      leftAlone: checked.leftAlone,
      ...(unchecked.length > 0 ? { unchecked } : {}),
    },
  };
}

/**
 * A candidate that removes a field the contract's readiness expression
 * reads (`self.spec.replicas`) is dropped: without it, whether the custom
 * resource is ready could not be told, and the update could only end
 * inconclusive. Pure.
 */
export function withoutReadinessField(checked: Checked, readiness: Contract["readiness"]): Checked {
  if (!checked.accepted || readiness.kind !== "cel" || checked.candidate.change !== "remove") return checked;
  const field = fieldName(checked.candidate.path);
  const read = new RegExp(`\\b${field.replaceAll(".", "\\.")}\\b(?![\\w-])`).test(readiness.expression);
  return read
    ? {
        candidate: checked.candidate,
        accepted: false,
        reason: `the contract's readiness reads ${field}: without it, whether the custom resource is ready could not be told`,
      }
    : checked;
}

/**
 * Every candidate created in a dry run, in a scenario's namespace (its
 * operator started when it serves webhooks, so they judge too).
 */
async function dryRunCandidates(
  contract: Contract,
  deps: ScenarioDeps,
  base: KubeObject,
  schema: Record<string, unknown>,
): Promise<CheckedCandidates> {
  const scenario = await Scenario.open("explore", deps);
  try {
    if (contract.operator.mode === "process" && contract.operator.webhooks) await scenario.startOperator();
    return await checkCandidates(deps.kube, scenario.namespace, base, schema);
  } finally {
    await scenario.close();
  }
}

/** What the API server made of the base and its candidates (checkCandidates). */
export type CheckedCandidates =
  | { readonly refusedBase: string }
  | { readonly results: readonly Checked[]; readonly leftAlone: readonly FieldLeftAlone[] };

/**
 * The candidates of `base` (spec-candidates.ts), each created in a dry run
 * in `namespace`: refused, or accepted but kept by the server as the base
 * is (pruned, or defaulted back), a candidate is dropped with why. The base
 * itself first: its answer, with the server's defaults, is what the
 * candidates are made up from; a refusal of it drops them all.
 */
export async function checkCandidates(
  kube: KubeClient,
  namespace: string,
  base: KubeObject,
  schema: Record<string, unknown>,
): Promise<CheckedCandidates> {
  const dryRun = (object: KubeObject) => {
    const { resourceVersion: _rv, uid: _uid, ...metadata } = object.metadata ?? {};
    return kube.create({ ...object, metadata: { ...metadata, namespace } }, { dryRun: true });
  };
  let answered: KubeObject;
  try {
    answered = await dryRun(base);
  } catch (error) {
    if (dryRunUnsupported(error) === undefined) return { refusedBase: describeError(error) };
    answered = base;
  }
  const { candidates, leftAlone } = specCandidates(answered.spec, schema);
  const results: Checked[] = [];
  for (const candidate of candidates) {
    const object = applyMergePatch(base, candidate.patch) as KubeObject;
    try {
      const answer = await dryRun(object);
      results.push(
        isDeepStrictEqual(answer.spec, answered.spec)
          ? {
              candidate,
              accepted: false,
              reason: "changes nothing the API server keeps (pruned, or set back to its default)",
            }
          : { candidate, accepted: true },
      );
    } catch (error) {
      const webhook = dryRunUnsupported(error);
      results.push(
        webhook === undefined
          ? { candidate, accepted: false, reason: describeError(error) }
          : {
              candidate,
              accepted: true,
              unchecked: `webhook ${webhook} takes no dry run; its write will tell`,
            },
      );
    }
  }
  return { results, leftAlone };
}
