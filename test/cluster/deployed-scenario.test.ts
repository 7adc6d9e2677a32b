import { KubeConfig } from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../src/kube/api-errors.js";
import { KubeClient, type KubeObject } from "../../src/kube/kube-client.js";
import {
  DeployedOperator,
  deployedSetup,
  KUBECONFIG_SECRET_NAME,
} from "../../src/operator/deployed/deployed-operator.js";
import { operatorManifests } from "../../src/operator/deployed/manifests.js";
import type { CommandRunner } from "../../src/process/command-runner.js";
import { ApiProxy } from "../../src/proxy/api-proxy.js";
import { silentLogger } from "../../src/util/logger.js";
import { pollUntil } from "../../src/util/poll.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import { installWebAppCrd, WEBAPP_API_VERSION, WEBAPP_RESOURCE } from "../support/webapp-example.js";

// A scenario's operator in deployed mode, against a real API server: its Deployment copied into the
// scenario's namespace, reading the proxy's kubeconfig from a Secret; crash and restart by Pod and
// token. kwok marks the Pods Running but runs no container, so this test plays the operator's
// part: whatever holds the Secret's current kubeconfig talks to the proxy, as the container would.
// The real container in a kind node is exercised by the self-test workflow on GitHub.

const FIXTURE = join(import.meta.dirname, "../fixtures/deployed-operator/config-default.yaml");
const noRunner: CommandRunner = { run: () => Promise.reject(new Error("plain YAML needs no command")) };

let cluster: TestCluster;
let namespace: string;
let proxy: ApiProxy;
let operator: DeployedOperator;

/** The client the operator's container would build from the mounted Secret. */
async function clientFromSecret(): Promise<KubeClient> {
  const secret = await cluster.client.get<KubeObject & { data?: Record<string, string> }>({
    apiVersion: "v1",
    kind: "Secret",
    namespace,
    name: KUBECONFIG_SECRET_NAME,
  });
  const config = new KubeConfig();
  config.loadFromString(Buffer.from(secret.data?.kubeconfig ?? "", "base64").toString("utf8"));
  return KubeClient.fromConfig(config);
}

/** The operator's first list of its custom resource, once a Pod other than `replaced` runs. */
async function actAsOperatorPod(replaced: readonly string[] = []): Promise<KubeClient> {
  await pollUntil(
    async () => {
      const pods = await cluster.client.list("v1", "Pod", { namespace });
      const running = pods.some(
        (p) =>
          (p.status as { phase?: string } | undefined)?.phase === "Running" &&
          !replaced.includes(p.metadata?.name ?? ""),
      );
      return running ? { done: true, value: undefined } : { done: false, reason: "no new running Pod" };
    },
    { description: "the operator's Pod to run", timeoutMs: 30_000 },
  );
  const client = await clientFromSecret();
  await client.list(WEBAPP_API_VERSION, "WebApp", { namespace });
  return client;
}

async function statusOf(client: KubeClient): Promise<number> {
  try {
    await client.list(WEBAPP_API_VERSION, "WebApp", { namespace });
    return 200;
  } catch (error) {
    if (error instanceof ApiError) return error.code;
    throw error;
  }
}

const podNames = async () =>
  (await cluster.client.list("v1", "Pod", { namespace })).map((p) => p.metadata?.name ?? "").sort();

beforeAll(async () => {
  cluster = await startTestCluster("rc-deployed-scenario");
  await installWebAppCrd(cluster.client);
  namespace = `rc-deployed-${randomBytes(3).toString("hex")}`;
  await cluster.client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  proxy = await ApiProxy.start({
    upstream: { kubeconfigPath: cluster.access.kubeconfigPath, context: cluster.access.context },
    logDir: await mkdtemp(join(tmpdir(), "rc-deployed-scenario-")),
    quietNamespace: namespace,
  });
  const { objects, target } = await operatorManifests(
    { manifests: [FIXTURE], image: "example.com/webapp:ci" },
    { runner: noRunner, contractDir: "/" },
  );
  operator = new DeployedOperator({
    setup: deployedSetup(objects, target, "127.0.0.1"),
    operator: {
      env: { LOG_LEVEL: "debug" },
      namespaced: { arg: "--watch-namespace" },
      startTimeoutMs: 30_000,
    },
    seat: {
      namespace,
      proxy,
      workDir: await mkdtemp(join(tmpdir(), "rc-deployed-work-")),
      kube: cluster.client,
    },
    customResource: WEBAPP_RESOURCE,
    logger: silentLogger,
  });
  proxy.setCrashHandler(() => operator.crash());
}, 180_000);

afterAll(async () => {
  await operator?.stop().catch(() => undefined);
  await proxy?.close();
  cluster?.client.close();
  await cluster?.provider.delete();
});

describe("a deployed operator in a scenario", () => {
  let first: KubeClient;

  it("starts as a copy of its Deployment in the scenario's namespace, once it lists its kind through the proxy", async () => {
    const started = operator.start();
    first = await actAsOperatorPod();
    await started;
    const deployment = await cluster.client.get<KubeObject & { spec: { template: { spec: PodSpec } } }>({
      apiVersion: "apps/v1",
      kind: "Deployment",
      namespace,
      name: "webapp-controller-manager",
    });
    const manager = deployment.spec.template.spec.containers.find((c) => c.name === "manager");
    expect(manager?.image).toBe("example.com/webapp:ci");
    expect(manager?.args).toContain(`--watch-namespace=${namespace}`);
    expect(manager?.env).toEqual(
      expect.arrayContaining([
        { name: "KUBECONFIG", value: "/var/run/reconcile-conformance/kubeconfig" },
        { name: "LOG_LEVEL", value: "debug" },
      ]),
    );
    // Its ServiceAccount came along (the manifests define it); the cluster-wide RBAC did not.
    expect(deployment.spec.template.spec.serviceAccountName).toBe("webapp-controller-manager");
    await cluster.client.get({
      apiVersion: "v1",
      kind: "ServiceAccount",
      namespace,
      name: "webapp-controller-manager",
    });
    expect(proxy.readLog.query({ resource: "webapps", actor: "operator" })[0]).toMatchObject({ run: 1 });
  });

  it("crashes after a write: the old token refused, the Pod replaced, the new run with a new token", async () => {
    const before = await podNames();
    // The old run's open watch: it ends with the crash, as a killed process's would.
    const oldWatch = await first.watch({ apiVersion: "v1", kind: "ConfigMap", namespace }, () => undefined);
    const fault = proxy.arm({ kind: "crash-after", match: { verb: "create", resource: "configmaps" } });
    // The crashed write succeeds, but its answer never reaches the operator.
    const write = first
      .create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "written-before-the-crash", namespace },
      })
      .then(
        () => "answered",
        () => "cut",
      );
    const fired = await fault.fired;
    expect(fired.outcome.status).toBe("reached");
    expect(await write).toBe("cut");
    const kill = fired.outcome.evidence.kill;
    expect(kill).toMatchObject({ signal: "Pod deleted with grace period 0", pids: [], run: 1 });
    expect(before).toContain(kill?.pod);
    await cluster.client.get({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace,
      name: "written-before-the-crash",
    });

    expect(await statusOf(first)).toBe(401);
    const ended = await Promise.race([
      // Cut by the proxy: the stream ends, cleanly or with a reset.
      oldWatch.done.then(
        () => "ended",
        () => "ended",
      ),
      new Promise((resolve) => setTimeout(() => resolve("still open"), 5_000)),
    ]);
    expect(ended).toBe("ended");
    const after = await podNames();
    expect(after).not.toContain(kill?.pod);

    const restarted = operator.restart();
    const second = await actAsOperatorPod(before);
    await restarted;
    expect(await statusOf(second)).toBe(200);
    const reads = proxy.readLog.query({ resource: "webapps", actor: "operator" });
    expect(reads.at(-1)).toMatchObject({ run: 2 });
  });

  it("restarts on request the same way, and stops for good", async () => {
    const before = await clientFromSecret();
    const pods = await podNames();
    const restarted = operator.restart();
    const third = await actAsOperatorPod(pods);
    await restarted;
    expect(await statusOf(before)).toBe(401);
    expect(proxy.readLog.query({ resource: "webapps", actor: "operator" }).at(-1)).toMatchObject({ run: 3 });

    await operator.stop();
    expect(await statusOf(third)).toBe(401);
    await pollUntil(
      async () => {
        const gone = !(await cluster.client.tryGet({
          apiVersion: "apps/v1",
          kind: "Deployment",
          namespace,
          name: "webapp-controller-manager",
        }));
        return gone ? { done: true, value: undefined } : { done: false, reason: "Deployment still there" };
      },
      { description: "the Deployment to go", timeoutMs: 30_000 },
    );
  });
});

interface PodSpec {
  serviceAccountName?: string;
  containers: { name: string; image?: string; args?: string[]; env?: { name: string; value?: string }[] }[];
}
