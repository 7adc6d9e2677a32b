import type { KubeClient, KubeObject } from "../kube/kube-client.js";
import { pollUntil } from "../util/poll.js";

/**
 * Waits until a cluster accepts workloads: the API server is ready, a node is
 * Ready (so the scheduler can place Pods) and the default ServiceAccount
 * exists (Pods are rejected by admission until the controller-manager makes it).
 */
export async function waitForWorkloadReady(
  client: KubeClient,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  const remaining = () => Math.max(1, deadline - Date.now());

  await waitForApiReady(client, {
    description: "the API server to be ready",
    timeoutMs: remaining(),
    signal: options.signal,
  });

  await pollUntil(
    async () => {
      const nodes = await client.list("v1", "Node");
      const ready = nodes.filter(isNodeReady);
      if (ready.length > 0) return { done: true, value: undefined };
      return {
        done: false,
        reason: nodes.length === 0 ? "no nodes registered" : `${nodes.length} node(s), none Ready`,
      };
    },
    { description: "a Ready node", timeoutMs: remaining(), signal: options.signal },
  );

  await pollUntil(
    async () => {
      const account = await client.tryGet({
        apiVersion: "v1",
        kind: "ServiceAccount",
        namespace: "default",
        name: "default",
      });
      return account
        ? { done: true, value: undefined }
        : { done: false, reason: "ServiceAccount default/default not created yet" };
    },
    { description: "the default ServiceAccount", timeoutMs: remaining(), signal: options.signal },
  );
}

/** Waits until the API server answers /readyz with 200. */
export async function waitForApiReady(
  client: KubeClient,
  options: { description: string; timeoutMs: number; signal?: AbortSignal },
): Promise<void> {
  await pollUntil(async () => {
    const { status, body } = await client.getRaw("/readyz", options.signal);
    return status === 200
      ? { done: true, value: undefined }
      : { done: false, reason: `/readyz ${status}: ${body.trim()}` };
  }, options);
}

function isNodeReady(node: KubeObject): boolean {
  const status = node.status as { conditions?: { type?: string; status?: string }[] } | undefined;
  return status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}
