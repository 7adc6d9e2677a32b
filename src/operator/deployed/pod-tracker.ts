import { z } from "zod";
import { InfrastructureError, throwIfAborted } from "../../errors.js";
import { isConflict, isNotFound } from "../../kube/api-errors.js";
import type { KubeClient } from "../../kube/kube-client.js";
import { pollUntil, PollTimeoutError } from "../../util/poll.js";

/** One Pod of the operator, as the crash bookkeeping knows it. */
export interface OperatorPod {
  readonly name: string;
  readonly uid: string;
  /** Pending, Running, Succeeded, Failed, Unknown. */
  readonly phase: string;
  /**
   * Whether the operator runs in it: its operator container's state is
   * running (a Pod stays Pending while a sidecar still pulls its image, and
   * Running while the operator container crash-loops); the phase when the
   * Pod reports no such container.
   */
  readonly running: boolean;
  readonly createdAt?: string;
}

/** What one crash did: the Pod deleted and the Pod its ReplicaSet made in its place. */
export interface PodCrash {
  readonly oldPod: { readonly name: string; readonly uid: string };
  readonly newPod: { readonly name: string; readonly uid: string };
}

export interface OperatorPodsOptions {
  /** The kit's own client (not the proxy's door: crashes are not the operator's writes). */
  readonly kube: KubeClient;
  /** The operator's Deployment. */
  readonly deployment: { readonly name: string; readonly namespace: string };
  /** The operator's container in the Pod (its state decides whether the operator runs). */
  readonly container?: string;
  /** How long a crash waits for the replacement Pod; default 60 s. */
  readonly replaceTimeoutMs?: number;
}

const ownerReference = z.looseObject({
  kind: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
});
const objectMeta = z.looseObject({
  name: z.string(),
  uid: z.string(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  ownerReferences: z.array(ownerReference).optional(),
});
const labelSelectorRequirement = z.object({
  key: z.string(),
  operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist"]),
  values: z.array(z.string()).optional(),
});
const labelSelector = z.object({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z.array(labelSelectorRequirement).optional(),
});
const deploymentShape = z.looseObject({
  metadata: objectMeta,
  spec: z.looseObject({
    selector: labelSelector,
  }),
});
const ownedShape = z.looseObject({ metadata: objectMeta });
const podShape = z.looseObject({
  metadata: objectMeta,
  status: z
    .looseObject({
      phase: z.string().optional(),
      containerStatuses: z
        .array(z.looseObject({ name: z.string(), state: z.record(z.string(), z.unknown()).optional() }))
        .optional(),
    })
    .optional(),
});

/** A Deployment's spec.selector. */
export type LabelSelector = z.input<typeof labelSelector>;

/** The label selector of a Deployment as the list API's `labelSelector` parameter takes it. */
export function labelSelectorQuery(selector: LabelSelector): string {
  const terms = Object.entries(selector.matchLabels ?? {}).map(([key, value]) => `${key}=${value}`);
  for (const requirement of selector.matchExpressions ?? []) {
    const values = `(${(requirement.values ?? []).join(",")})`;
    if (requirement.operator === "In") terms.push(`${requirement.key} in ${values}`);
    if (requirement.operator === "NotIn") terms.push(`${requirement.key} notin ${values}`);
    if (requirement.operator === "Exists") terms.push(requirement.key);
    if (requirement.operator === "DoesNotExist") terms.push(`!${requirement.key}`);
  }
  return terms.join(",");
}

function controllerOf(meta: z.output<typeof objectMeta>, kind: string): string | undefined {
  return meta.ownerReferences?.find((ref) => ref.controller === true && ref.kind === kind)?.uid;
}

/**
 * The operator's Pods when it runs in the cluster: which one is current,
 * and the crash the proxy's crash-after fault asks for. A crash deletes
 * the Pod with no grace period, as a node would lose a process, and the
 * Deployment's ReplicaSet makes a new one; when that one has started is
 * for the proxy to see (its first list or watch), not for this class.
 *
 * A Pod belongs to the operator when its controller is a ReplicaSet whose
 * controller is the Deployment: the selector alone would also match Pods
 * someone else created with the same labels.
 */
export class OperatorPods {
  constructor(private readonly options: OperatorPodsOptions) {}

  private get where(): string {
    const { namespace, name } = this.options.deployment;
    return `Deployment ${namespace}/${name}`;
  }

  /** The operator's Pods that are not being deleted, oldest first. */
  async pods(signal?: AbortSignal): Promise<OperatorPod[]> {
    const { kube, deployment } = this.options;
    const found = await kube.tryGet({ apiVersion: "apps/v1", kind: "Deployment", ...deployment }, signal);
    if (!found) {
      throw new InfrastructureError(
        "deploy/deployment-missing",
        `${this.where} does not exist in the cluster`,
      );
    }
    const parsed = deploymentShape.safeParse(found);
    if (!parsed.success) {
      throw new InfrastructureError(
        "deploy/deployment-unreadable",
        `${this.where} has no metadata.uid or spec.selector`,
      );
    }
    const labelSelector = labelSelectorQuery(parsed.data.spec.selector);
    const listOptions = { namespace: deployment.namespace, labelSelector, signal };
    const [replicaSets, pods] = await Promise.all([
      kube.list("apps/v1", "ReplicaSet", listOptions),
      kube.list("v1", "Pod", listOptions),
    ]);
    const deploymentUid = parsed.data.metadata.uid;
    const ownReplicaSets = new Set(
      replicaSets.flatMap((rs) => {
        const meta = ownedShape.safeParse(rs);
        return meta.success && controllerOf(meta.data.metadata, "Deployment") === deploymentUid
          ? [meta.data.metadata.uid]
          : [];
      }),
    );
    return pods
      .flatMap((pod) => {
        const meta = podShape.safeParse(pod);
        if (!meta.success) return [];
        const { metadata, status } = meta.data;
        const owner = controllerOf(metadata, "ReplicaSet");
        if (owner === undefined || !ownReplicaSets.has(owner) || metadata.deletionTimestamp) return [];
        const phase = status?.phase ?? "Unknown";
        const container = status?.containerStatuses?.find((c) => c.name === this.options.container);
        return [
          {
            name: metadata.name,
            uid: metadata.uid,
            phase,
            running: container ? container.state?.running !== undefined : phase === "Running",
            ...(metadata.creationTimestamp ? { createdAt: metadata.creationTimestamp } : {}),
          },
        ];
      })
      .sort((a, b) => (a.createdAt ?? "").localeCompare(b.createdAt ?? "") || a.name.localeCompare(b.name));
  }

  /**
   * The Pod the operator runs in now: its one Running Pod, or undefined.
   * Two at once is an error: the Deployment should have been patched to
   * one replica with the Recreate strategy (patchOperatorDeployment).
   */
  async currentPod(signal?: AbortSignal): Promise<OperatorPod | undefined> {
    return this.onlyRunning(await this.pods(signal));
  }

  private onlyRunning(pods: readonly OperatorPod[]): OperatorPod | undefined {
    const running = pods.filter((pod) => pod.running);
    if (running.length > 1) {
      throw new InfrastructureError(
        "deploy/several-pods",
        `${this.where} runs ${running.length} Pods (${running.map((p) => p.name).join(", ")}); a crash must hit the only operator: patch it to replicas 1 and strategy Recreate`,
      );
    }
    return running[0];
  }

  /** Waits for a Running Pod (one other than `except`, when given: a replacement). */
  async waitForRunningPod(options: {
    timeoutMs: number;
    except?: string;
    signal?: AbortSignal;
  }): Promise<OperatorPod> {
    const description = `a running Pod of ${this.where}${options.except ? ` other than uid ${options.except}` : ""}`;
    try {
      return await pollUntil(
        async () => {
          const pods = await this.pods(options.signal);
          const pod = this.onlyRunning(pods);
          return pod && pod.uid !== options.except
            ? { done: true, value: pod }
            : { done: false, reason: describePods(pods) };
        },
        { description, timeoutMs: options.timeoutMs, intervalMs: 200, signal: options.signal },
      );
    } catch (error) {
      throw asInfrastructure(error);
    }
  }

  /**
   * Crashes the operator: deletes the Pod it runs in (crashVictim when no
   * Pod reports it running yet) with gracePeriodSeconds 0
   * and the Pod's UID as a precondition (so a Pod that replaced it in the
   * meantime is never deleted by mistake), then waits until the
   * ReplicaSet has made a new Pod (a new UID; not necessarily running yet).
   */
  async crash(signal?: AbortSignal): Promise<PodCrash> {
    const pods = await this.pods(signal);
    const victim = this.onlyRunning(pods) ?? crashVictim(pods);
    if (!victim) {
      throw new InfrastructureError(
        "deploy/no-running-pod",
        `cannot crash the operator: ${this.where} has no running Pod (${describePods(pods)})`,
      );
    }
    await this.deleteNow(victim, signal);
    try {
      const replacement = await pollUntil(
        async () => {
          const now = await this.pods(signal);
          const fresh = now.find((pod) => pod.uid !== victim.uid);
          return fresh ? { done: true, value: fresh } : { done: false, reason: describePods(now) };
        },
        {
          description: `a new Pod of ${this.where} after deleting ${victim.name}`,
          timeoutMs: this.options.replaceTimeoutMs ?? 60_000,
          intervalMs: 100,
          signal,
        },
      );
      return {
        oldPod: { name: victim.name, uid: victim.uid },
        newPod: { name: replacement.name, uid: replacement.uid },
      };
    } catch (error) {
      throw asInfrastructure(error);
    }
  }

  /** Deletes `pod` at once, and only that Pod (its UID a precondition). */
  private async deleteNow(pod: OperatorPod, signal: AbortSignal | undefined): Promise<void> {
    const { kube, deployment } = this.options;
    throwIfAborted(signal, `deleting Pod ${pod.name}`);
    try {
      await kube.delete(
        { apiVersion: "v1", kind: "Pod", namespace: deployment.namespace, name: pod.name },
        { gracePeriodSeconds: 0, uid: pod.uid },
      );
    } catch (error) {
      if (isConflict(error) || isNotFound(error)) {
        throw new InfrastructureError(
          "deploy/pod-replaced",
          `cannot crash the operator: Pod ${pod.name} (uid ${pod.uid}) was ${isNotFound(error) ? "deleted" : "replaced"} before the kit could delete it; something else is restarting the operator`,
          [error instanceof Error ? error.message : String(error)],
          { cause: error },
        );
      }
      throw error;
    }
  }
}

/**
 * The Pod to delete when none reports its operator container running: the
 * only live Pod. A crash is asked for right after the operator wrote through
 * the proxy with the current run's token, which only the newest Pod mounts,
 * so the operator runs in it even while its status still says Pending (the
 * kubelet reports container starts late on a loaded node: CI saw a Pod
 * Pending a second after its operator's writes). With several live Pods and
 * none running there is no telling which one wrote: undefined.
 */
export function crashVictim(pods: readonly OperatorPod[]): OperatorPod | undefined {
  return pods.length === 1 ? pods[0] : undefined;
}

function describePods(pods: readonly OperatorPod[]): string {
  return pods.length === 0 ? "no Pods" : `Pods: ${pods.map((p) => `${p.name} ${p.phase}`).join(", ")}`;
}

/** A wait that timed out is the cluster's failure, with what was last seen as evidence. */
function asInfrastructure(error: unknown): unknown {
  if (!(error instanceof PollTimeoutError)) return error;
  return new InfrastructureError("deploy/pod-timeout", error.message, [error.lastReason], { cause: error });
}
