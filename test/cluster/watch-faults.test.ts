import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient, type KubeObject, type WatchHandle } from "../../src/kube/kube-client.js";
import { ApiProxy } from "../../src/proxy/api-proxy.js";
import { pollUntil } from "../../src/util/poll.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";

// Watch faults at the proxy's event seam against a real API server: a client with the operator's
// token watches ConfigMaps through the proxy, as an informer would; the kit writes with its direct
// client; a hold or coalesce decides what the watcher sees and when.

let cluster: TestCluster;
let namespace: string;
let proxy: ApiProxy;
let operator: KubeClient;
let watch: WatchHandle;
const seen: { type: string; name: string; resourceVersion: string }[] = [];

const configMap = (name: string, data: Record<string, string> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace },
  data,
});

async function change(name: string, value: string): Promise<string> {
  const changed = await cluster.client.patch(
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { value } },
    { type: "merge" },
  );
  return changed.metadata?.resourceVersion ?? "";
}

async function untilSeen(name: string, type: string): Promise<void> {
  await pollUntil(
    () =>
      Promise.resolve(
        seen.some((e) => e.name === name && e.type === type)
          ? { done: true as const, value: undefined }
          : { done: false as const, reason: `no ${type} of ${name} yet` },
      ),
    { description: `the watcher to see ${type} ${name}`, timeoutMs: 15_000, intervalMs: 20 },
  );
}

const of = (name: string) => seen.filter((e) => e.name === name).map((e) => `${e.type}@${e.resourceVersion}`);

beforeAll(async () => {
  cluster = await startTestCluster("rc-watch-faults");
  namespace = `rc-watch-${randomBytes(3).toString("hex")}`;
  await cluster.client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  const dir = await mkdtemp(join(tmpdir(), "rc-watch-faults-"));
  proxy = await ApiProxy.start({
    upstream: { kubeconfigPath: cluster.access.kubeconfigPath, context: cluster.access.context },
    logDir: dir,
    quietNamespace: namespace,
  });
  operator = KubeClient.fromKubeconfig(await proxy.writeKubeconfig(join(dir, "operator.kubeconfig")));
  watch = await operator.watch({ apiVersion: "v1", kind: "ConfigMap", namespace }, (type, object) => {
    seen.push({
      type,
      name: object.metadata?.name ?? "",
      resourceVersion: object.metadata?.resourceVersion ?? "",
    });
  });
  // The watch is flowing once it delivers an event made after it started.
  await cluster.client.create(configMap("started"));
  await untilSeen("started", "ADDED");
}, 180_000);

afterAll(async () => {
  watch?.stop();
  operator?.close();
  await proxy?.close();
  cluster?.client.close();
  await cluster?.provider.delete();
});

describe("watch faults on the operator's watches", () => {
  it("hold: keeps one object's events back while others pass, then delivers them in order", async () => {
    const fault = proxy.armWatch({
      mode: "hold",
      group: "",
      resource: "configmaps",
      match: { name: "held" },
    });
    const created = await cluster.client.create(configMap("held", { value: "1" }));
    const changed = await change("held", "2");
    await cluster.client.create(configMap("free"));
    await untilSeen("free", "ADDED");
    expect(of("held")).toEqual([]);
    expect(fault.held().map((e) => `${e.type}@${e.resourceVersion}`)).toEqual([
      `ADDED@${created.metadata?.resourceVersion}`,
      `MODIFIED@${changed}`,
    ]);
    // Not delivered, so not in the log of what the operator was given.
    expect(proxy.readLog.delivered.filter((e) => e.name === "held")).toEqual([]);

    const proof = fault.release();
    await untilSeen("held", "MODIFIED");
    expect(of("held")).toEqual([`ADDED@${created.metadata?.resourceVersion}`, `MODIFIED@${changed}`]);
    expect(proof).toMatchObject({ streams: 1 });
    expect(proof.taken).toHaveLength(2);
    expect(proof.delivered).toEqual(proof.taken);
    expect(proxy.readLog.delivered.filter((e) => e.name === "held").map((e) => e.type)).toEqual([
      "ADDED",
      "MODIFIED",
    ]);

    // Released: the object's next event passes at once.
    const again = await change("held", "3");
    await pollUntil(
      () =>
        Promise.resolve(
          of("held").includes(`MODIFIED@${again}`)
            ? { done: true as const, value: undefined }
            : { done: false as const, reason: "not yet" },
        ),
      { description: "the released object's next event", timeoutMs: 15_000, intervalMs: 20 },
    );
  });

  it("coalesce: delivers only the last state of what changed in the window", async () => {
    await cluster.client.create(configMap("busy", { value: "0" }));
    await untilSeen("busy", "ADDED");
    const fault = proxy.armWatch({
      mode: "coalesce",
      group: "",
      resource: "configmaps",
      match: { name: "busy" },
    });
    await change("busy", "1");
    await change("busy", "2");
    const last = await change("busy", "3");
    await cluster.client.create(configMap("marker"));
    await untilSeen("marker", "ADDED");
    expect(of("busy")).toHaveLength(1);
    const proof = fault.release();
    await untilSeen("busy", "MODIFIED");
    expect(of("busy").slice(1)).toEqual([`MODIFIED@${last}`]);
    expect(proof.taken).toHaveLength(3);
    expect(proof.delivered.map((e) => e.resourceVersion)).toEqual([last]);
  });

  it("acts on the operator's watches only: the kit's own watch through the proxy sees everything", async () => {
    const kit = proxy.kitClient();
    const kitSeen: string[] = [];
    const kitWatch = await kit.watch({ apiVersion: "v1", kind: "ConfigMap", namespace }, (type, object) =>
      kitSeen.push(`${type} ${object.metadata?.name}`),
    );
    const fault = proxy.armWatch({
      mode: "hold",
      group: "",
      resource: "configmaps",
      match: { name: "quiet" },
    });
    await cluster.client.create(configMap("quiet"));
    await pollUntil(
      () =>
        Promise.resolve(
          kitSeen.includes("ADDED quiet")
            ? { done: true as const, value: undefined }
            : { done: false as const, reason: "not yet" },
        ),
      { description: "the kit's watch to see it", timeoutMs: 15_000, intervalMs: 20 },
    );
    expect(of("quiet")).toEqual([]);
    fault.release();
    await untilSeen("quiet", "ADDED");
    kitWatch.stop();
    kit.close();
  });
});
