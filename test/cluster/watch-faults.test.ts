import { randomBytes } from "node:crypto";
import https from "node:https";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient, type KubeObject, type WatchHandle } from "../../src/kube/kube-client.js";
import { ApiProxy } from "../../src/proxy/api-proxy.js";
import { historicalFailures } from "../../src/proxy/historical-reads.js";
import { pollUntil } from "../../src/util/poll.js";
import { createSettledNamespace, startTestCluster, type TestCluster } from "../support/kwok-cluster.js";

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

describe("historical reads", () => {
  /** A raw request with the operator's token: the body (all of it, or a watch's first `events` lines). */
  async function operatorRequest(
    target: ApiProxy,
    path: string,
    events = 0,
  ): Promise<{ code: number; body: string }> {
    const token = /token: (\S+)/.exec(target.operatorKubeconfigYaml())?.[1] ?? "";
    return new Promise((resolve, reject) => {
      const request = https.request(
        new URL(path, target.url),
        {
          ca: target.certificateAuthority,
          headers: { Authorization: `Bearer ${token}`, Accept: "application/json" },
        },
        (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            body += chunk;
            if (events > 0 && body.split("\n").length > events) {
              request.destroy();
              resolve({ code: res.statusCode ?? 0, body });
            }
          });
          res.on("end", () => resolve({ code: res.statusCode ?? 0, body }));
          res.on("error", () => undefined);
        },
      );
      request.setTimeout(15_000, () => request.destroy(new Error(`no answer to ${path} in 15 s`)));
      request.on("error", reject);
      request.end();
    });
  }

  it("refuses watch-list, serves the first list from the past and lets the watch catch up from there; later lists are the present", async () => {
    const ns = `rc-history-${randomBytes(3).toString("hex")}`;
    // The watch from `before` must bring `after` first, not a kube-root-ca.crt published late.
    await createSettledNamespace(cluster.client, ns);
    const dir = await mkdtemp(join(tmpdir(), "rc-history-"));
    const past = await ApiProxy.start({
      upstream: { kubeconfigPath: cluster.access.kubeconfigPath, context: cluster.access.context },
      logDir: dir,
    });
    try {
      const cm = (name: string): KubeObject => ({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: ns },
      });
      const before = await cluster.client.create(cm("before"));
      const after = await cluster.client.create(cm("after"));
      const x = before.metadata?.resourceVersion ?? "";
      past.beginOperatorRun(1);
      const armed = past.armHistory({ resourceVersion: x, fromRun: 2 });
      const list = `/api/v1/namespaces/${ns}/configmaps?limit=500&resourceVersion=0`;
      const names = (body: string) =>
        ((JSON.parse(body) as { items: KubeObject[] }).items ?? [])
          .map((i) => i.metadata?.name)
          .filter((n) => n !== "kube-root-ca.crt");
      // Run 1 is before the restart: the present.
      expect(names((await operatorRequest(past, list)).body)).toEqual(["after", "before"]);

      past.beginOperatorRun(2);
      const watchList = await operatorRequest(
        past,
        `/api/v1/namespaces/${ns}/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
      );
      expect(watchList.code).toBe(422);
      const first = await operatorRequest(past, list);
      expect(first.code).toBe(200);
      expect(names(first.body)).toEqual(["before"]);
      expect((JSON.parse(first.body) as KubeObject).metadata?.resourceVersion).toBe(x);
      // The watch from the past brings what happened since, in order.
      const caughtUp = await operatorRequest(
        past,
        `/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${x}&allowWatchBookmarks=true`,
        1,
      );
      const event = JSON.parse(caughtUp.body.split("\n")[0] ?? "{}") as { type: string; object: KubeObject };
      expect([event.type, event.object.metadata?.name, event.object.metadata?.resourceVersion]).toEqual([
        "ADDED",
        "after",
        after.metadata?.resourceVersion,
      ]);
      // Only the first list of the resource: a relist is the present.
      expect(names((await operatorRequest(past, list)).body)).toEqual(["after", "before"]);

      const proof = armed.proof();
      expect(proof).toMatchObject({
        resourceVersion: x,
        refusedWatchLists: 1,
        lists: [
          {
            resource: "configmaps",
            namespace: ns,
            servedFrom: x,
            code: 200,
            asked: "limit=500&resourceVersion=0",
          },
        ],
        watches: [{ resource: "configmaps", namespace: ns, code: 200 }],
      });
      expect(historicalFailures(proof)).toEqual([]);
      const reads = past.readLog.query({ actor: "operator", resource: "configmaps", after: 1 });
      expect(reads.map((r) => [r.verb, r.code, r.resourceVersion, r.resourceVersionMatch])).toEqual([
        ["watch", 422, undefined, "NotOlderThan"],
        ["list", 200, x, "Exact"],
        ["watch", 200, x, undefined],
        ["list", 200, "0", undefined],
      ]);
    } finally {
      await past.close();
    }
  });

  it("says when the past is out of reach: a list the API server refuses", async () => {
    const ns = `rc-history-${randomBytes(3).toString("hex")}`;
    // The watch from `before` must bring `after` first, not a kube-root-ca.crt published late.
    await createSettledNamespace(cluster.client, ns);
    const past = await ApiProxy.start({
      upstream: { kubeconfigPath: cluster.access.kubeconfigPath, context: cluster.access.context },
    });
    try {
      // A revision the cluster has not reached: refused as surely as a compacted one (which a test
      // cannot wait 5 minutes for), and through the same path.
      const armed = past.armHistory({ resourceVersion: "999999999", fromRun: 0 });
      const list = await operatorRequest(past, `/api/v1/namespaces/${ns}/configmaps?resourceVersion=0`);
      expect(list.code).not.toBe(200);
      expect(historicalFailures(armed.proof())).toEqual([
        expect.stringMatching(
          new RegExp(
            `^the list of configmaps at resourceVersion 999999999 was refused \\(${list.code}\\): .*resource ?version`,
            "i",
          ),
        ),
      ]);
    } finally {
      await past.close();
    }
  });
});
