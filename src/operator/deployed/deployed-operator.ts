import { appendFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { DeployedOperator as DeployedOperatorContract } from "../../contract/load-contract.js";
import { AbortedError, describeError, InfrastructureError, UsageError } from "../../errors.js";
import { isAlreadyExists, isNotFound } from "../../kube/api-errors.js";
import type { KubeClient, KubeObject } from "../../kube/kube-client.js";
import type { CommandRunner } from "../../process/command-runner.js";
import { tailLines } from "../../process/command-runner.js";
import type { KillRecord } from "../../proxy/faults.js";
import type { Logger } from "../../util/logger.js";
import { pollUntil } from "../../util/poll.js";
import { releaseOperatorLeases } from "../leases.js";
import type { OperatorLauncher, OperatorUnderTest, ScenarioSeat } from "../operator-under-test.js";
import { kindHostAddress } from "./host-address.js";
import { loadImageIntoKind } from "./kind-image.js";
import { operatorManifests, type OperatorTarget } from "./manifests.js";
import {
  DEFAULT_KUBECONFIG_MOUNT_PATH,
  kubeconfigSecret,
  patchOperatorDeployment,
} from "./patch-deployment.js";
import { OperatorPods } from "./pod-tracker.js";

/** The Secret that holds each scenario operator's kubeconfig (the proxy's address and token). */
export const KUBECONFIG_SECRET_NAME = "reconcile-conformance-kubeconfig";

/**
 * Kinds that have no namespace. Everything else in the manifests is
 * namespaced and is copied into each scenario's namespace beside the
 * operator's Deployment (its ServiceAccount, ConfigMaps, Roles).
 */
const CLUSTER_SCOPED = new Set([
  "Namespace",
  "CustomResourceDefinition",
  "ClusterRole",
  "ClusterRoleBinding",
  "PriorityClass",
  "StorageClass",
  "IngressClass",
  "RuntimeClass",
  "APIService",
  "PersistentVolume",
  "ValidatingWebhookConfiguration",
  "MutatingWebhookConfiguration",
  "ValidatingAdmissionPolicy",
  "ValidatingAdmissionPolicyBinding",
]);

/**
 * Admission webhooks would call the operator's webhook server for every
 * object of its kinds, in every scenario, before the reconcile loop under
 * test ever sees them; they need certificates (cert-manager) the kit does
 * not provide. The kit tests the reconcile loop: it leaves them out and
 * says so.
 */
const LEFT_OUT = new Set(["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"]);

/** The manifests, made ready once per run. */
export interface DeployedSetup {
  readonly target: OperatorTarget;
  /** Namespaced objects other than the operator's Deployment, copied into each scenario's namespace. */
  readonly scenarioObjects: readonly KubeObject[];
  /** Where the scenarios' proxies listen: the address the kind node reaches this machine by. */
  readonly hostAddress: string;
}

/**
 * operator.deploy, once per run, on the kind cluster the run started: the
 * manifests rendered, the image loaded into the nodes, the cluster-wide
 * objects (CRDs, ClusterRoles) applied, and the address the cluster's Pods
 * reach the proxies at. Each scenario then gets a copy of the operator's
 * Deployment in its own namespace (DeployedOperator).
 */
export async function prepareDeployedOperators(
  operator: DeployedOperatorContract,
  customResource: { readonly group: string; readonly resource: string },
  deps: {
    readonly runner: CommandRunner;
    readonly kube: KubeClient;
    readonly logger: Logger;
    readonly signal: AbortSignal;
    readonly cluster: { readonly provider: string; readonly name: string };
  },
): Promise<OperatorLauncher> {
  if (deps.cluster.provider !== "kind") {
    throw new UsageError(
      "config/deploy-needs-kind",
      `operator.deploy runs the operator in the cluster, which needs --cluster kind (this run's cluster is ${deps.cluster.provider}: ${deps.cluster.provider === "kwok" ? "kwok only simulates Pods, their containers never run" : "the kit cannot load an image into it or know how its Pods reach this machine"}); use operator.command to run the operator as a local process instead`,
    );
  }
  const { objects, target } = await operatorManifests(operator.deploy, {
    runner: deps.runner,
    contractDir: operator.dir,
    signal: deps.signal,
  });
  const leftOut = objects.filter((o) => LEFT_OUT.has(o.kind ?? ""));
  for (const object of leftOut) {
    deps.logger.warn(
      `operator.deploy: leaving out ${object.kind} ${object.metadata?.name ?? "?"}: the kit tests the reconcile loop, not admission webhooks`,
    );
  }
  if (operator.deploy.loadImage) {
    deps.logger.info(
      `operator.deploy: loading ${operator.deploy.image} into kind cluster ${deps.cluster.name}`,
    );
    await loadImageIntoKind({
      runner: deps.runner,
      image: operator.deploy.image,
      cluster: deps.cluster.name,
      signal: deps.signal,
    });
  }
  const hostAddress = await kindHostAddress({ runner: deps.runner, signal: deps.signal });
  deps.logger.info(`operator.deploy: the operator's Pods reach the kit's proxies at ${hostAddress}`);
  for (const object of objects) {
    const kind = object.kind ?? "";
    if (!CLUSTER_SCOPED.has(kind) || LEFT_OUT.has(kind) || kind === "Namespace") continue;
    // The contract's CRDs are installed already; the manifests' copy of them is applied over it.
    await deps.kube.patch(withoutServerFields(object), { type: "apply", force: true });
  }
  const setup = deployedSetup(objects, target, hostAddress);
  return {
    proxyListenAddress: hostAddress,
    launch: (seat) => new DeployedOperator({ setup, operator, seat, customResource, logger: deps.logger }),
  };
}

/**
 * What each scenario gets a copy of: the namespaced objects of the
 * manifests (the operator's ServiceAccount, ConfigMaps, Roles) and the
 * operator's Deployment. Other Deployments of the manifests (a metrics
 * proxy, a webhook server) are not the operator under test and stay out.
 */
export function deployedSetup(
  objects: readonly KubeObject[],
  target: OperatorTarget,
  hostAddress: string,
): DeployedSetup {
  return {
    target,
    scenarioObjects: objects.filter((o) => !CLUSTER_SCOPED.has(o.kind ?? "") && o.kind !== "Deployment"),
    hostAddress,
  };
}

export interface DeployedOperatorOptions {
  readonly setup: DeployedSetup;
  readonly operator: Pick<DeployedOperatorContract, "env" | "namespaced" | "startTimeoutMs">;
  readonly seat: ScenarioSeat;
  /** The custom resource whose list or watch through the proxy means "the operator has started". */
  readonly customResource: { readonly group: string; readonly resource: string };
  readonly logger: Logger;
}

/**
 * One scenario's operator as a Deployment in the scenario's namespace: a
 * copy of the manifests' operator Deployment whose operator container
 * reads a kubeconfig (mounted from a Secret) that points at the scenario's
 * proxy with a token of the current run.
 *
 * A crash cannot kill a Pod as SIGKILL kills a process group, so it is
 * done in the order that gives the same guarantee: the proxy refuses the
 * run's token first (from that moment nothing the old Pod sends reaches
 * the API server; the answer to the crashed write is never delivered), the
 * Secret gets the next run's token, the old Pod's log is saved, and the Pod
 * is deleted with a grace period of 0 (its ReplicaSet makes the new one,
 * which mounts the new token). The new run starts counting at that moment,
 * so its first list or watch through the proxy is its start.
 */
export class DeployedOperator implements OperatorUnderTest {
  private runs = 0;
  private created = false;
  /** The read count when the current run began: its first list or watch after this is its start. */
  private readsAtRun = 0;
  /** A crash began the next run already; restart only waits for it. */
  private crashed = false;
  private readonly pods: OperatorPods;
  readonly logFiles: string[] = [];

  constructor(private readonly options: DeployedOperatorOptions) {
    const { seat, setup } = options;
    this.pods = new OperatorPods({
      kube: seat.kube,
      deployment: { name: setup.target.name, namespace: seat.namespace },
      container: setup.target.container,
    });
  }

  async start(signal?: AbortSignal): Promise<void> {
    const { seat } = this.options;
    this.beginRun();
    await this.writeKubeconfigSecret();
    if (!this.created) {
      for (const object of this.options.setup.scenarioObjects) await this.createInScenario(object);
      await this.createInScenario(this.deployment());
      this.created = true;
    }
    this.options.logger.info(
      `operator: run ${this.runs} as Deployment ${seat.namespace}/${this.options.setup.target.name}`,
    );
    await this.untilStarted(signal);
  }

  async restart(signal?: AbortSignal): Promise<void> {
    if (!this.crashed) await this.replacePod("restart");
    this.crashed = false;
    await this.untilStarted(signal);
  }

  async stop(): Promise<void> {
    const { seat } = this.options;
    // Nothing of it reaches the API server from here on, whatever its Pod still does.
    seat.proxy.revokeOperatorToken();
    if (this.created) {
      await this.saveLog().catch(() => undefined);
      await seat.kube
        .delete(
          {
            apiVersion: "apps/v1",
            kind: "Deployment",
            namespace: seat.namespace,
            name: this.options.setup.target.name,
          },
          { propagationPolicy: "Background" },
        )
        .catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
    }
  }

  async logTail(lines = 20): Promise<string[]> {
    const live = await this.podLog(lines).catch(() => undefined);
    if (live !== undefined && live.length > 0) return live;
    const file = this.logFiles.at(-1);
    return file ? tailLines(await readFile(file, "utf8").catch(() => ""), lines) : [];
  }

  /** The proxy's crash-after handler: the Pod is gone (and its token refused) when this resolves. */
  async crash(): Promise<KillRecord> {
    const pod = await this.replacePod("crash");
    this.crashed = true;
    return { signal: "Pod deleted with grace period 0", pids: [], pod };
  }

  /** Refuses the current run's token, hands the next one to the Pod that replaces the current one, deletes it. */
  private async replacePod(why: "crash" | "restart"): Promise<string> {
    const { seat, logger } = this.options;
    seat.proxy.revokeOperatorToken();
    await this.saveLog().catch((error: unknown) =>
      logger.warn(
        `operator: could not save the log of run ${this.runs} before its Pod's ${why}: ${describeError(error)}`,
      ),
    );
    // Before the replacement exists: deleting a Lease it had already taken would depose it.
    await releaseOperatorLeases(seat.proxy, seat.kube, logger);
    this.beginRun();
    await this.writeKubeconfigSecret();
    const { oldPod, newPod } = await this.pods.crash();
    logger.info(`operator: ${why}: deleted Pod ${oldPod.name}; run ${this.runs} is Pod ${newPod.name}`);
    return oldPod.name;
  }

  private beginRun(): void {
    const { proxy } = this.options.seat;
    this.runs++;
    proxy.beginOperatorRun(this.runs);
    this.readsAtRun = proxy.readCount;
  }

  private async untilStarted(signal: AbortSignal | undefined): Promise<void> {
    const { seat, customResource, operator } = this.options;
    try {
      await pollUntil(
        () =>
          Promise.resolve(
            seat.proxy.sawRead(customResource, this.readsAtRun)
              ? { done: true as const, value: undefined }
              : { done: false as const, reason: `no list or watch of ${customResource.resource} yet` },
          ),
        {
          description: "the operator's Pod to start",
          timeoutMs: operator.startTimeoutMs,
          intervalMs: 100,
          signal,
        },
      );
    } catch (error) {
      if (error instanceof AbortedError) throw error;
      throw new InfrastructureError(
        "operator/pod-start-timeout",
        `the operator's Pod did not list or watch ${customResource.resource}.${customResource.group} through the proxy within ${operator.startTimeoutMs} ms (run ${this.runs})`,
        [...(await this.podStatus()), ...(await this.logTail(20))],
        { cause: error },
      );
    }
  }

  /** The scenario's copy of the operator's Deployment, reading its kubeconfig from the Secret. */
  private deployment(): KubeObject {
    const { setup, operator, seat } = this.options;
    const copy = inNamespace(setup.target.deployment, seat.namespace);
    const namespaced = operator.namespaced;
    const patched = patchOperatorDeployment(copy, {
      container: setup.target.container,
      secretName: KUBECONFIG_SECRET_NAME,
      mountPath: DEFAULT_KUBECONFIG_MOUNT_PATH,
      ...(namespaced
        ? {
            namespaced:
              "arg" in namespaced
                ? { namespace: seat.namespace, arg: namespaced.arg }
                : { namespace: seat.namespace, env: namespaced.env },
          }
        : {}),
      env: operator.env,
    });
    // A ServiceAccount the manifests do not define would keep the Pod from being created.
    const serviceAccounts = new Set(
      setup.scenarioObjects.filter((o) => o.kind === "ServiceAccount").map((o) => o.metadata?.name),
    );
    const podSpec = (patched.spec as { template?: { spec?: Record<string, unknown> } } | undefined)?.template
      ?.spec;
    if (
      podSpec &&
      typeof podSpec.serviceAccountName === "string" &&
      !serviceAccounts.has(podSpec.serviceAccountName)
    ) {
      delete podSpec.serviceAccountName;
      delete podSpec.serviceAccount;
    }
    return patched;
  }

  private async writeKubeconfigSecret(): Promise<void> {
    const { seat } = this.options;
    const secret = kubeconfigSecret({
      name: KUBECONFIG_SECRET_NAME,
      namespace: seat.namespace,
      kubeconfigYaml: seat.proxy.operatorKubeconfigYaml(),
    });
    await seat.kube.patch(secret, { type: "apply", force: true });
  }

  private async createInScenario(object: KubeObject): Promise<void> {
    try {
      await this.options.seat.kube.create(inNamespace(object, this.options.seat.namespace));
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
  }

  /** Appends the current Pod's log to this run's log file (a Pod's log goes with the Pod). */
  private async saveLog(): Promise<void> {
    const lines = await this.podLog();
    if (lines === undefined) return;
    const file = join(this.options.seat.workDir, `operator-${this.runs}.log`);
    if (!this.logFiles.includes(file)) this.logFiles.push(file);
    await appendFile(file, lines.map((l) => `${l}\n`).join(""));
  }

  /** The operator container's log in the current Pod (the last `lines` of it); undefined without a Pod. */
  private async podLog(lines?: number): Promise<string[] | undefined> {
    const { seat, setup } = this.options;
    const pod = await this.pods.currentPod();
    if (!pod) return undefined;
    const query = new URLSearchParams({ container: setup.target.container });
    if (lines !== undefined) query.set("tailLines", String(lines));
    const path = `/api/v1/namespaces/${encodeURIComponent(seat.namespace)}/pods/${encodeURIComponent(pod.name)}/log?${query.toString()}`;
    const answer = await seat.kube.getRaw(path);
    if (answer.status !== 200) return undefined;
    return answer.body.split("\n").filter((line) => line !== "");
  }

  /** What the operator's Pods are doing, for an operator that did not start (ImagePullBackOff, CrashLoopBackOff). */
  private async podStatus(): Promise<string[]> {
    const { seat, setup } = this.options;
    try {
      const pods = await seat.kube.list("v1", "Pod", { namespace: seat.namespace });
      const mine = pods.filter((p) => p.metadata?.name?.startsWith(`${setup.target.name}-`));
      if (mine.length === 0) return [`no Pod of Deployment ${seat.namespace}/${setup.target.name}`];
      return mine.map((pod) => `Pod ${pod.metadata?.name ?? "?"}: ${describePodStatus(pod)}`);
    } catch (error) {
      return [`could not list the operator's Pods: ${describeError(error)}`];
    }
  }
}

/** "Running" or "Pending: manager waiting (ImagePullBackOff: ...)". */
function describePodStatus(pod: KubeObject): string {
  const status = pod.status as
    | {
        phase?: string;
        containerStatuses?: { name: string; state?: Record<string, { reason?: string; message?: string }> }[];
      }
    | undefined;
  const containers = (status?.containerStatuses ?? []).flatMap((c) =>
    Object.entries(c.state ?? {})
      .filter(([state]) => state !== "running")
      .map(
        ([state, detail]) =>
          `${c.name} ${state}${detail.reason ? ` (${detail.reason}${detail.message ? `: ${detail.message}` : ""})` : ""}`,
      ),
  );
  return [status?.phase ?? "unknown", ...containers].join(": ");
}

/** A manifest object placed in `namespace`, without what the server fills in. */
function inNamespace(object: KubeObject, namespace: string): KubeObject {
  const copy = withoutServerFields(object);
  return { ...copy, metadata: { ...copy.metadata, namespace } };
}

function withoutServerFields(object: KubeObject): KubeObject {
  const copy = structuredClone(object) as KubeObject & { status?: unknown };
  delete copy.status;
  const metadata: Record<string, unknown> = { ...copy.metadata };
  for (const field of ["resourceVersion", "uid", "creationTimestamp", "managedFields", "generation"]) {
    delete metadata[field];
  }
  return { ...copy, metadata };
}
