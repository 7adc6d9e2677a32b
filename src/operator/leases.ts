import { describeError } from "../errors.js";
import { isNotFound } from "../kube/api-errors.js";
import type { KubeClient } from "../kube/kube-client.js";
import type { ApiProxy } from "../proxy/api-proxy.js";
import type { Logger } from "../util/logger.js";

/**
 * After a crash: deletes the Leases the operator created or renewed (seen
 * in the write log), so that its restart does not wait for a dead leader's
 * lease to expire. A failure is a slower restart, not a failed crash: it is
 * logged, not thrown.
 */
export async function releaseOperatorLeases(
  proxy: ApiProxy,
  kube: KubeClient,
  logger: Logger,
): Promise<void> {
  const leases = new Map<string, { namespace: string; name: string }>();
  for (const entry of proxy.writeLog.query({
    resource: "leases",
    group: "coordination.k8s.io",
    actor: "operator",
  })) {
    if (entry.code < 300 && entry.namespace && entry.name) {
      leases.set(`${entry.namespace}/${entry.name}`, { namespace: entry.namespace, name: entry.name });
    }
  }
  for (const lease of leases.values()) {
    try {
      await kube.delete({ apiVersion: "coordination.k8s.io/v1", kind: "Lease", ...lease });
      logger.info(`operator: released lease ${lease.namespace}/${lease.name} after the crash`);
    } catch (error) {
      if (isNotFound(error)) continue;
      logger.warn(
        `operator: could not release its Lease ${lease.namespace}/${lease.name} after the crash (the restart waits for it to expire): ${describeError(error)}`,
      );
    }
  }
}
