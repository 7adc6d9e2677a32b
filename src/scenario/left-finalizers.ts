import type { Contract } from "../contract/load-contract.js";
import { isNotFound } from "../kube/api-errors.js";
import type { KubeClient } from "../kube/kube-client.js";

/**
 * Removes the finalizers left on the custom resources of a namespace being
 * deleted. The operator has stopped by then (cleanups run last-in first-out),
 * so nobody would release them: the namespace would stay Terminating for
 * good, with everything the resources own (their Deployments and Pods, a
 * load on the cluster that slows every later scenario, and litter in a
 * user's own cluster).
 */
export async function releaseLeftFinalizers(
  kube: KubeClient,
  contract: Contract,
  namespace: string,
): Promise<void> {
  const { group, version, kind } = contract.customResource;
  const apiVersion = group ? `${group}/${version}` : version;
  const left = await kube.list(apiVersion, kind, { namespace });
  for (const object of left) {
    const name = object.metadata?.name;
    if (!name || object.metadata?.namespace !== namespace || !(object.metadata?.finalizers?.length ?? 0))
      continue;
    await kube
      .patchJson({ apiVersion, kind, name, namespace }, [{ op: "remove", path: "/metadata/finalizers" }])
      .catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
  }
}
