import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isConflict, isNotFound } from "../../src/kube/api-errors.js";
import type { KubeObject } from "../../src/kube/kube-client.js";
import { isProcessAlive } from "../../src/process/process-table.js";
import { pathExists } from "../../src/util/files.js";
import { pollUntil } from "../../src/util/poll.js";
import { ExistingProvider } from "../../src/cluster/existing-provider.js";
import { silentLogger } from "../../src/util/logger.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";

// One real kwok cluster (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, kwok) for the whole file; each test works in its own namespace.
let cluster: TestCluster;
let clusterDeleted = false;

beforeAll(async () => {
  cluster = await startTestCluster("rc-basics");
});

afterAll(async () => {
  cluster?.client.close();
  if (cluster && !clusterDeleted) await cluster.provider.delete();
});

async function freshNamespace(): Promise<string> {
  const name = `t-${randomBytes(3).toString("hex")}`;
  await cluster.client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  return name;
}

function condition(object: KubeObject | undefined, type: string): string | undefined {
  const status = object?.status as { conditions?: { type: string; status: string }[] } | undefined;
  return status?.conditions?.find((c) => c.type === type)?.status;
}

describe("kwok cluster", () => {
  it("serves a real API: /version reports the built release", async () => {
    const { status, body } = await cluster.client.getRaw("/version");
    expect(status).toBe(200);
    expect(JSON.parse(body)).toMatchObject({ gitVersion: "v1.35.4" });
    expect(cluster.access.apiServerUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it("establishes a CRD applied through the facade and serves its custom resources", async () => {
    const group = "test.reconcile-conformance.dev";
    await cluster.client.create({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: "Namespaced",
        names: { plural: "widgets", singular: "widget", kind: "Widget" },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
        ],
      },
    });
    await pollUntil(
      async () => {
        const crd = await cluster.client.get({
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "CustomResourceDefinition",
          name: `widgets.${group}`,
        });
        return condition(crd, "Established") === "True"
          ? { done: true, value: undefined }
          : { done: false, reason: `Established=${condition(crd, "Established")}` };
      },
      { description: "the CRD to be Established", timeoutMs: 30_000 },
    );

    const namespace = await freshNamespace();
    const created = await cluster.client.create({
      apiVersion: `${group}/v1`,
      kind: "Widget",
      metadata: { name: "w1", namespace },
      spec: { size: 3 },
    });
    expect(created.metadata?.uid).toBeTruthy();
    const read = await cluster.client.get({
      apiVersion: `${group}/v1`,
      kind: "Widget",
      name: "w1",
      namespace,
    });
    expect(read.spec).toEqual({ size: 3 });
  });

  it("rejects a stale replace with 409 and keeps the newer value (the seeds' first experiment)", async () => {
    const namespace = await freshNamespace();
    const ref = { apiVersion: "v1", kind: "ConfigMap", name: "experiment", namespace };
    const kept = await cluster.client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "experiment", namespace },
      data: { value: "one" },
    });

    // A second writer reads the current object and changes it to "two".
    const current = await cluster.client.get(ref);
    await cluster.client.replace({ ...current, data: { value: "two" } });

    // The first writer still holds the object it read before, with the old resourceVersion.
    let rejection: unknown;
    try {
      await cluster.client.replace({ ...kept, data: { value: "stale-write" } });
    } catch (error) {
      rejection = error;
    }
    expect(rejection, "a stale replace must fail").toBeDefined();
    expect(isConflict(rejection)).toBe(true);
    expect((await cluster.client.get(ref)).data).toEqual({ value: "two" });
  });

  it("makes a one-replica Deployment available (controller-manager, scheduler and kwok at work)", async () => {
    const namespace = await freshNamespace();
    const labels = { app: "web" };
    await cluster.client.create({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: "web", image: "example.invalid/web:1" }] },
        },
      },
    });
    const deployment = await pollUntil(
      async () => {
        const d = await cluster.client.get({
          apiVersion: "apps/v1",
          kind: "Deployment",
          name: "web",
          namespace,
        });
        const status = d.status as { availableReplicas?: number } | undefined;
        return condition(d, "Available") === "True" && status?.availableReplicas === 1
          ? { done: true, value: d }
          : {
              done: false,
              reason: `Available=${condition(d, "Available")}, availableReplicas=${status?.availableReplicas}`,
            };
      },
      { description: "Deployment web to be available", timeoutMs: 60_000 },
    );
    expect(deployment.metadata?.generation).toBe(1);
    const pods = await cluster.client.list("v1", "Pod", { namespace, labelSelector: "app=web" });
    expect(pods).toHaveLength(1);
    expect((pods[0]?.status as { phase?: string }).phase).toBe("Running");
    expect((pods[0]?.spec as { nodeName?: string }).nodeName).toBeTruthy();
    const [node] = await cluster.client.list("v1", "Node");
    expect((node?.status as { allocatable?: { pods?: string } }).allocatable?.pods).toBe("1k");
  });

  it("garbage-collects an object whose owner is deleted", async () => {
    const namespace = await freshNamespace();
    const owner = await cluster.client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "owner", namespace },
    });
    const dependentRef = { apiVersion: "v1", kind: "ConfigMap", name: "dependent", namespace };
    await cluster.client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "dependent",
        namespace,
        ownerReferences: [
          { apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata?.uid ?? "" },
        ],
      },
    });
    await cluster.client.delete({ apiVersion: "v1", kind: "ConfigMap", name: "owner", namespace });
    await pollUntil(
      async () => {
        try {
          await cluster.client.get(dependentRef);
          return { done: false, reason: "dependent still exists" };
        } catch (error) {
          if (isNotFound(error)) return { done: true, value: undefined };
          throw error;
        }
      },
      { description: "the dependent to be garbage-collected", timeoutMs: 60_000 },
    );
  });

  it("is usable through the existing provider, which never deletes it", async () => {
    const existing = new ExistingProvider(
      {
        provider: "existing",
        kubeconfigPath: cluster.access.kubeconfigPath,
        context: cluster.access.context,
      },
      { logger: silentLogger },
    );
    const access = await existing.create();
    expect(access).toMatchObject({
      provider: "existing",
      context: cluster.access.context,
      apiServerUrl: cluster.access.apiServerUrl,
    });
    await existing.delete();
    expect((await cluster.client.getRaw("/readyz")).status).toBe(200);
    const pids = await cluster.provider.processIds();
    expect(pids).toHaveLength(5);
    expect(pids.every(isProcessAlive)).toBe(true);
  });

  it("leaves no process running and no files behind after delete", async () => {
    const pids = await cluster.provider.processIds();
    expect(pids.length).toBe(5); // etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok
    expect(pids.every(isProcessAlive)).toBe(true);

    await cluster.provider.delete();
    clusterDeleted = true;

    expect(pids.filter(isProcessAlive)).toEqual([]);
    expect(await pathExists(cluster.provider.clusterDir)).toBe(false);
    // A second delete is a no-op, not an error.
    await cluster.provider.delete();
  });
});
