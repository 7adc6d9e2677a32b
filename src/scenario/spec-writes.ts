import { isDeepStrictEqual } from "node:util";
import type { Contract } from "../contract/load-contract.js";
import { sampleWithSpec, updateName } from "../contract/spec-path.js";
import { describeError } from "../errors.js";
import type { KubeClient, KubeObject, ObjectRef } from "../kube/kube-client.js";
import { dryRunUnsupported, webhookRefusal } from "../webhooks/webhook-refusals.js";
import { Inconclusive } from "./inconclusive.js";

// The kit's writes of the custom resource's spec, through a scenario's writer: the sample's
// create (with the spec of a later update, for a life born with it), an update as a merge patch,
// and the API server's dry run before one. What the server refuses is Inconclusive: the contract
// asked for a spec it does not accept, so nothing about the operator can be judged.

/**
 * Throws Inconclusive when the operator's webhooks stopped the kit's write:
 * the contract asked for what the operator refuses, which says nothing
 * about its reconciliation.
 */
function refusedByWebhook(error: unknown, write: string): void {
  const refusal = webhookRefusal(error);
  if (refusal === undefined) return;
  throw new Inconclusive(
    `the operator's webhooks stopped the kit's ${write}: ${refusal}; the contract's sample and updates must pass them, as a user's would`,
  );
}

/** Creates the sample in `namespace`, with the spec of update `spec` merged in (0: as written). */
export async function createSampleWithSpec(
  kit: KubeClient,
  contract: Contract,
  namespace: string,
  spec: number,
): Promise<KubeObject> {
  const born = sampleWithSpec(contract, spec);
  const { resourceVersion: _rv, uid: _uid, ...metadata } = born.metadata ?? {};
  try {
    return await kit.create({ ...born, metadata: { ...metadata, namespace } });
  } catch (error) {
    const what = spec === 0 ? "the sample" : `the sample with the spec of ${updateName(contract, spec)}`;
    refusedByWebhook(error, `create of ${what}`);
    if (spec === 0) throw error;
    throw new Inconclusive(
      `the API server refused the sample created with the spec of ${updateName(contract, spec)}: ${describeError(error)}`,
    );
  }
}

/** Writes update `ordinal` (1-based) of the custom resource `cr` as a merge patch; with `dryRunFirst`, dryRunUpdate before. */
export async function writeUpdate(
  kit: KubeClient,
  cr: ObjectRef,
  contract: Contract,
  update: Readonly<Record<string, unknown>>,
  ordinal: number,
  { dryRunFirst = false }: { readonly dryRunFirst?: boolean } = {},
): Promise<KubeObject> {
  const patch = {
    ...update,
    apiVersion: cr.apiVersion,
    kind: cr.kind,
    metadata: {
      ...((update.metadata as object | undefined) ?? {}),
      name: cr.name,
      namespace: cr.namespace,
    },
  };
  if (dryRunFirst) await dryRunUpdate(kit, cr, patch, updateName(contract, ordinal));
  try {
    return await kit.patch(patch, { type: "merge" });
  } catch (error) {
    refusedByWebhook(error, updateName(contract, ordinal));
    throw new Inconclusive(
      `the API server refused the contract's ${updateName(contract, ordinal)}: ${describeError(error)}`,
    );
  }
}

/**
 * The API server's dry run of an update (admission webhooks included,
 * nothing stored), before it is written: Inconclusive when the server
 * refuses it, or when it would change nothing the server keeps (a field the
 * schema does not have is pruned; a value equal to the current one, or one
 * a default or a webhook sets back, is no change), so that no check passes
 * on an update the operator never saw. A webhook that takes no dry run
 * (sideEffects Unknown or Some) leaves the update to its write.
 */
async function dryRunUpdate(kit: KubeClient, cr: ObjectRef, patch: KubeObject, name: string): Promise<void> {
  const before = await kit.get(cr);
  let after: KubeObject;
  try {
    after = await kit.patch(patch, { type: "merge", dryRun: true });
  } catch (error) {
    // A webhook with side effects takes no dry run: the write itself will tell.
    if (dryRunUnsupported(error) !== undefined) return;
    refusedByWebhook(error, `${name} (in a dry run)`);
    throw new Inconclusive(
      `the API server refused the contract's ${name} in a dry run: ${describeError(error)}`,
    );
  }
  if (isDeepStrictEqual(storedContent(before), storedContent(after))) {
    throw new Inconclusive(
      `the contract's ${name} changes nothing the API server keeps: its dry run answered the custom resource as it was (a field the CRD's schema does not have is pruned; a value equal to the current one, or one a default or a webhook sets back, is no change), so no check could judge the operator on it: change the update`,
    );
  }
}

/** What an update can change of an object: all but its status and the fields the server keeps for itself. */
function storedContent(object: KubeObject): unknown {
  const { status: _status, metadata = {}, ...rest } = object as KubeObject & { status?: unknown };
  const { resourceVersion: _rv, managedFields: _mf, generation: _generation, ...kept } = metadata;
  return { ...rest, metadata: kept };
}
