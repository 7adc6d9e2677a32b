import type { Contract } from "../contract/load-contract.js";
import { isAlreadyExists, isNotFound } from "../kube/api-errors.js";
import { splitApiVersion } from "../kube/api-version.js";
import type { KubeClient, KubeObject } from "../kube/kube-client.js";
import type { WriteEntry } from "../proxy/write-log.js";
import { describeError, UsageError } from "../errors.js";

/**
 * The contract's fixtures: what the sample refers to and must find (a
 * Secret, a ConfigMap, another custom resource, a StorageClass). The kit
 * makes them, never the operator, so no check takes them for children: the
 * children are what the operator's own writes created.
 */
export interface Fixture {
  readonly file: string;
  readonly object: KubeObject;
  /** group/resource as the write log names them. */
  readonly group: string;
  readonly resource: string;
  readonly namespaced: boolean;
}

/** Each fixture with its resource and scope, from the cluster's discovery (after the CRDs are installed). */
export async function resolveFixtures(
  kube: KubeClient,
  contract: Pick<Contract, "file" | "fixtures">,
): Promise<Fixture[]> {
  return Promise.all(
    contract.fixtures.map(async ({ file, object }) => {
      const apiVersion = object.apiVersion ?? "";
      const kind = object.kind ?? "";
      const found = await kube.resourceOf(apiVersion, kind).catch((error: unknown) => {
        throw new UsageError(
          "config/fixture-refused",
          `${contract.file}: fixtures: ${file}: the cluster does not serve ${kind} in ${apiVersion} (${describeError(error)}); list its CRD under crds`,
        );
      });
      const [group] = splitApiVersion(apiVersion);
      return { file, object, group, resource: found.plural, namespaced: found.namespaced };
    }),
  );
}

/** Creates fixtures (the cluster-scoped ones once per run, or the namespaced ones in `namespace`); a refusal is the contract's fault. */
export async function createFixtures(
  kube: KubeClient,
  fixtures: readonly Fixture[],
  namespace: string | undefined,
): Promise<void> {
  for (const fixture of fixtures) {
    const object = {
      ...fixture.object,
      metadata: { ...fixture.object.metadata, ...(namespace === undefined ? {} : { namespace }) },
    };
    try {
      await kube.create(object);
    } catch (error) {
      // A cluster-scoped fixture of a run before (an existing cluster) is there already: used as it is.
      if (namespace === undefined && isAlreadyExists(error)) continue;
      throw new UsageError(
        "config/fixture-refused",
        `fixtures: ${fixture.file}: the API server refused ${fixture.object.kind} ${fixture.object.metadata?.name ?? ""}${namespace ? ` in ${namespace}` : ""}: ${describeError(error)}`,
      );
    }
  }
}

/** Deletes cluster-scoped fixtures at the end of a run (gone already is fine). */
export async function deleteFixtures(kube: KubeClient, fixtures: readonly Fixture[]): Promise<void> {
  for (const { object } of fixtures) {
    await kube
      .delete({
        apiVersion: object.apiVersion ?? "",
        kind: object.kind ?? "",
        name: object.metadata?.name ?? "",
      })
      .catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
  }
}

/**
 * Notes for a scenario's verdicts: each operator write that changed, created
 * or deleted a fixture (in `namespace`, or cluster-scoped). A fixture is the
 * user's, not the operator's: a write to it is worth knowing whatever the
 * check judged. Pure.
 */
export function fixtureChanges(
  writes: readonly WriteEntry[],
  fixtures: readonly Fixture[],
  namespace: string,
): string[] {
  return writes.flatMap((write) => {
    if (write.actor !== "operator" || !["changed", "created", "deleted"].includes(write.effect)) return [];
    const fixture = fixtures.find(
      (f) =>
        f.group === write.group &&
        f.resource === write.resource &&
        f.object.metadata?.name === write.name &&
        (f.namespaced ? write.namespace === namespace : !write.namespace),
    );
    if (!fixture) return [];
    const changed = write.changedPaths?.length ? ` (${write.changedPaths.join(", ")})` : "";
    return [
      `the operator ${write.effect} fixture ${fixture.object.kind}/${write.name ?? ""} (write ${write.seq}: ${write.verb}${write.subresource ? ` ${write.subresource}` : ""})${changed}`,
    ];
  });
}
