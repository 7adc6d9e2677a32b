import type { KubeObject } from "../kube/kube-client.js";
import { applyMergePatch } from "../util/records.js";

// The specs a run reaches, numbered: spec 0 is the sample as written, specs 1..n the contract's
// updates applied one after another, then one per generated update, each the spec of the
// contract's last update with its one change. How they are reached and how messages name them.

/** What the specs are made of: the contract's sample, its updates, and the updates the run made up. */
export interface SpecSources {
  readonly sample: { readonly object: KubeObject };
  readonly updates: readonly Readonly<Record<string, unknown>>[];
  readonly generatedUpdates?: readonly GeneratedUpdate[];
}

/** One update the kit made up from the CRD's schema: one spec field changed. */
export interface GeneratedUpdate {
  /** The merge patch of the custom resource: { spec: ... }. */
  readonly patch: Readonly<Record<string, unknown>>;
  /** "spec.pages: key page1.md removed": how messages name it. */
  readonly description: string;
  /** The field it changes: "spec.pages". */
  readonly field: string;
}

/** How many specs follow the sample's: one per update of the contract, then one per generated update. */
export function updateCount(contract: Pick<SpecSources, "updates" | "generatedUpdates">): number {
  return contract.updates.length + (contract.generatedUpdates?.length ?? 0);
}

/**
 * The merge patches that lead from the sample to spec k, in order, each
 * with the spec it reaches (as messages name it): the contract's updates
 * 1..k; for a generated update, all the contract's updates and then its one
 * change, so that it is judged on that change alone.
 */
export function specPath(
  contract: Pick<SpecSources, "updates" | "generatedUpdates">,
  k: number,
): readonly { readonly patch: Readonly<Record<string, unknown>>; readonly spec: number }[] {
  const own = contract.updates.map((patch, index) => ({ patch, spec: index + 1 }));
  if (k <= contract.updates.length) return own.slice(0, k);
  const generated = contract.generatedUpdates?.[k - contract.updates.length - 1];
  if (!generated) throw new RangeError(`spec ${k}: the contract has specs 0..${updateCount(contract)}`);
  return [...own, { patch: generated.patch, spec: k }];
}

/**
 * How a life reaches spec k, as the references live it: born with the
 * sample (spec 0) and updated along specPath(k); for a generated update,
 * born with the spec of the contract's last update and updated once, so
 * that its life is about its one change. Pure.
 */
export function lifeTo(
  contract: Pick<SpecSources, "updates" | "generatedUpdates">,
  k: number,
): { readonly bornAt: number; readonly steps: ReturnType<typeof specPath> } {
  const generated = k > contract.updates.length;
  const path = specPath(contract, k);
  return generated ? { bornAt: contract.updates.length, steps: path.slice(-1) } : { bornAt: 0, steps: path };
}

/** The custom resource born with spec k: the sample with specPath(k) merged in. Pure. */
export function sampleWithSpec(
  contract: Pick<SpecSources, "sample" | "updates" | "generatedUpdates">,
  k: number,
): KubeObject {
  return specPath(contract, k).reduce<unknown>(
    (object, { patch }) => applyMergePatch(object, patch),
    contract.sample.object,
  ) as KubeObject;
}

/** How messages name spec change k (1-based): "update 2", or "generated update 3 (spec.port: 9090 → 9091)". */
export function updateName(contract: Pick<SpecSources, "updates" | "generatedUpdates">, k: number): string {
  const generated = contract.generatedUpdates?.[k - contract.updates.length - 1];
  return generated ? `generated update ${k} (${generated.description})` : `update ${k}`;
}
