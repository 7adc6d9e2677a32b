import { KubeConfig } from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile } from "node:fs/promises";
import https from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { InfrastructureError } from "../../src/errors.js";
import { KubeClient, type KubeObject } from "../../src/kube/kube-client.js";
import { OperatorProcess } from "../../src/operator/operator-process.js";
import { ApiProxy, CONCURRENT_WRITE_ANNOTATION } from "../../src/proxy/api-proxy.js";
import { WatchEventSplitter } from "../../src/proxy/watch-events.js";
import type { WriteEntry } from "../../src/proxy/write-log.js";
import { pollUntil } from "../../src/util/poll.js";
import {
  createSettledNamespace,
  kwokConfig,
  startTestCluster,
  type TestCluster,
} from "../support/kwok-cluster.js";
import { WEBAPP_RESOURCE } from "../support/webapp-example.js";

// The proxy's lock, its kit writer, its faults and its logs, driven by plain
// clients (one holding the operator's token, one the kit's) against a real
// API server: every fault outcome is checked against what the server stored.

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster("rc-faults");
});

afterAll(async () => {
  cluster?.client.close();
  await cluster?.provider.delete();
});

interface Bench {
  readonly proxy: ApiProxy;
  readonly namespace: string;
  readonly workDir: string;
  readonly kubeconfig: string;
  /** A client with the operator's token. */
  readonly operator: KubeClient;
  /** The kit's own writer. */
  readonly kit: KubeClient;
}

const opened: Bench[] = [];

async function bench(): Promise<Bench> {
  const namespace = `f-${randomBytes(3).toString("hex")}`;
  // Once kube-root-ca.crt is there, the tests' ConfigMap watches see only the ConfigMaps they write.
  await createSettledNamespace(cluster.client, namespace);
  const workDir = await mkdtemp(join(tmpdir(), "rc-faults-"));
  const proxy = await ApiProxy.start({
    upstream: { kubeconfigPath: cluster.access.kubeconfigPath, context: cluster.access.context },
    logDir: workDir,
  });
  const kubeconfig = await proxy.writeKubeconfig(join(workDir, "kubeconfig"));
  const b = {
    proxy,
    namespace,
    workDir,
    kubeconfig,
    operator: KubeClient.fromKubeconfig(kubeconfig),
    kit: proxy.kitClient(),
  };
  opened.push(b);
  return b;
}

afterEach(async () => {
  for (const b of opened.splice(0)) {
    b.operator.close();
    b.kit.close();
    await b.proxy.close();
  }
});

const configMap = (
  namespace: string,
  name: string,
  data: Record<string, string> = { a: "1" },
): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace },
  data,
});
const ref = (namespace: string, name: string) => ({ apiVersion: "v1", kind: "ConfigMap", name, namespace });

function request(
  url: string,
  options: { ca?: string; token?: string; method?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: options.method ?? "GET",
        ca: options.ca,
        headers: options.token === undefined ? {} : { Authorization: `Bearer ${options.token}` },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("the proxy's lock", () => {
  it("answers 401 to a request without the run's token or with a wrong one, and forwards the operator's and the kit's", async () => {
    const b = await bench();
    const url = `${b.proxy.url}/api/v1/namespaces/${b.namespace}/configmaps`;
    const ca = b.proxy.certificateAuthority;
    expect((await request(url, { ca })).status).toBe(401);
    expect((await request(url, { ca, token: "0".repeat(64) })).status).toBe(401);
    expect(b.proxy.refusedRequestCount).toBe(2);
    const config = new KubeConfig();
    config.loadFromFile(b.kubeconfig);
    expect((await request(url, { ca, token: config.getCurrentUser()?.token })).status).toBe(200);
    expect(await b.kit.list("v1", "ConfigMap", { namespace: b.namespace })).toBeInstanceOf(Array);
    expect(b.proxy.operatorRequestCount).toBe(1);
    // It listens on loopback only, with TLS: a client that does not trust its certificate is refused.
    expect(new URL(b.proxy.url).hostname).toBe("127.0.0.1");
    await expect(request(url, {})).rejects.toThrow(/self-signed|self signed/);
  });

  it("passes the operator's own Impersonate-* headers when it is not impersonating", async () => {
    const b = await bench();
    const config = new KubeConfig();
    config.loadFromFile(b.kubeconfig);
    const user = config.getCurrentUser();
    if (!user) throw new Error("no user");
    config.users = [{ ...user, impersonateUser: "someone@example.com" }];
    const impersonating = KubeClient.fromConfig(config);
    const review = await impersonating.create({
      apiVersion: "authentication.k8s.io/v1",
      kind: "SelfSubjectReview",
      metadata: { name: "me" },
    });
    impersonating.close();
    expect((review.status as { userInfo: { username: string } }).userInfo.username).toBe(
      "someone@example.com",
    );
  });
});

describe("the kit's writer", () => {
  it("logs the kit's writes as actor kit, in the same sequence, with exact effects, and faults never act on them", async () => {
    const b = await bench();
    const crash = b.proxy.arm({ kind: "fail-with", status: 500, match: { resource: "configmaps" } });
    await b.kit.create(configMap(b.namespace, "kit-made"));
    await b.kit.patch(configMap(b.namespace, "kit-made", { a: "1" }), { type: "merge" });
    await b.operator.create(configMap(b.namespace, "operator-made")).catch(() => undefined);
    const log = b.proxy.writeLog.query();
    expect(log.map((e) => [e.seq, e.actor, e.verb, e.effect])).toEqual([
      [1, "kit", "create", "created"],
      [2, "kit", "patch", "no-op"],
      [3, "operator", "create", "rejected"],
    ]);
    expect(crash.outcome().status).toBe("reached");
  });

  it("never writes a Secret's values into the write log", async () => {
    const b = await bench();
    await b.operator.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "creds", namespace: b.namespace },
      stringData: { password: "hunter2-plaintext" },
      data: { token: Buffer.from("t0ken-plaintext").toString("base64") },
    });
    await b.proxy.writeLog.flush();
    const file = await readFile(join(b.workDir, "writes.ndjson"), "utf8");
    expect(file).toContain('"resource":"secrets"');
    expect(file).not.toContain("hunter2");
    expect(file).not.toContain(Buffer.from("t0ken-plaintext").toString("base64"));
    expect(file).toMatch(/"password":"hmac:[0-9a-f]{12}"/);
  });
});

describe("mutate-before", () => {
  it("on a write without a precondition: the write goes through, and a merge patch keeps the kit's annotation", async () => {
    const b = await bench();
    await b.operator.create(configMap(b.namespace, "m"));
    const fault = b.proxy.arm({
      kind: "mutate-before",
      mutation: { kind: "annotate" },
      match: { verb: "patch", resource: "configmaps" },
    });
    await b.operator.patch(configMap(b.namespace, "m", { a: "2" }), { type: "merge" });
    const fired = await fault.fired;
    const live = await cluster.client.get(ref(b.namespace, "m"));
    expect(live.data).toEqual({ a: "2" });
    expect(live.metadata?.annotations?.[CONCURRENT_WRITE_ANNOTATION]).toBeTruthy();
    expect(fired.outcome.evidence.kitWrite).toMatchObject({
      actor: "kit",
      verb: "patch",
      effect: "changed",
      fault: fault.id,
    });
    expect(fired.outcome.evidence.hit).toMatchObject({
      actor: "operator",
      effect: "changed",
      fault: fault.id,
    });
    expect(fired.outcome.evidence.kitWrite?.seq).toBeLessThan(fired.seq);
  });

  it("on an unconditional whole-object replace: the write goes through and erases the kit's annotation, as the log shows", async () => {
    const b = await bench();
    const created = await b.operator.create(configMap(b.namespace, "r"));
    const fault = b.proxy.arm({
      kind: "mutate-before",
      mutation: { kind: "annotate" },
      match: { verb: "update", resource: "configmaps" },
    });
    const { resourceVersion: _rv, ...metadata } = created.metadata ?? {};
    await b.operator.replace({ ...created, metadata, data: { a: "1" } });
    await fault.fired;
    const live = await cluster.client.get(ref(b.namespace, "r"));
    expect(live.metadata?.annotations?.[CONCURRENT_WRITE_ANNOTATION]).toBeUndefined();
    // The operator's write changed the stored object (it removed the annotation): blamed on it, rightly.
    expect(b.proxy.writeLog.query({ actor: "operator", verb: "update" })).toMatchObject([
      { effect: "changed" },
    ]);
  });

  it("on a write with a precondition: a real 409, and a given patch to another object as the mutation", async () => {
    const b = await bench();
    const target = await b.operator.create(configMap(b.namespace, "t"));
    await b.operator.create(configMap(b.namespace, "spec-holder"));
    const fault = b.proxy.arm({
      kind: "mutate-before",
      mutation: { kind: "patch", patchType: "merge", patch: { data: { spec: "changed-by-kit" } } },
      target: {
        group: "",
        version: "v1",
        resource: "configmaps",
        namespace: b.namespace,
        name: "spec-holder",
      },
      match: { verb: "update", name: "t" },
      onlyWithPrecondition: true,
    });
    const stale = { ...target, data: { a: "2" } };
    // A stale write on its own object is not what the kit touched: this one succeeds...
    await b.operator.replace(stale);
    await fault.fired;
    expect((await cluster.client.get(ref(b.namespace, "spec-holder"))).data).toEqual({
      a: "1",
      spec: "changed-by-kit",
    });
    // ...while conflict-before on the same kind of write makes the API server itself answer 409.
    const conflict = b.proxy.arm({ kind: "conflict-before", match: { verb: "update", name: "t" } });
    const current = await cluster.client.get(ref(b.namespace, "t"));
    const error = await b.operator.replace({ ...current, data: { a: "3" } }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 409, reason: "Conflict" });
    expect((await conflict.fired).outcome.evidence.hit).toMatchObject({
      code: 409,
      reason: "Conflict",
      effect: "rejected",
    });
  });

  it("whose own write fails: reports failed and forwards the operator's write untouched", async () => {
    const b = await bench();
    // A create: the object the kit would annotate does not exist yet.
    const fault = b.proxy.arm({
      kind: "mutate-before",
      mutation: { kind: "annotate" },
      match: { verb: "create" },
    });
    await b.operator.create(configMap(b.namespace, "fresh"));
    await expect(fault.fired).rejects.toThrow(/answered 404/);
    expect(fault.outcome()).toMatchObject({ status: "failed" });
    expect(await cluster.client.get(ref(b.namespace, "fresh"))).toBeTruthy();
    expect(b.proxy.writeLog.query({ actor: "operator" })).toMatchObject([
      { verb: "create", effect: "created" },
    ]);
    expect(b.proxy.writeLog.query({ actor: "kit" })).toMatchObject([{ code: 404, effect: "rejected" }]);
  });
});

describe("ordinal matching and outcomes", () => {
  it("acts on the k-th counted write, reports reached or diverged against the baseline entry, and not-reached when it never came", async () => {
    const b = await bench();
    const ns = b.namespace;
    const expectedSecond = { verb: "patch" as const, group: "", resource: "configmaps", name: "two" };
    const reached = b.proxy.arm({
      kind: "fail-with",
      status: 500,
      match: { namespace: ns, ordinal: 2, excludeNoOps: true },
      expect: expectedSecond,
    });
    const diverged = b.proxy.arm({
      kind: "crash-after",
      match: { namespace: ns, ordinal: 3, excludeNoOps: true },
      expect: { ...expectedSecond, name: "three" },
    });
    b.proxy.setCrashHandler(() => Promise.resolve({ signal: "SIGKILL", pids: [] }));
    const never = b.proxy.arm({ kind: "crash-after", match: { namespace: ns, ordinal: 9 } });

    // A fault that acts before a write cannot know it will be a no-op: it acts on the next write in
    // scope once k-1 were counted. crash-after sees the answer, so its count leaves no-ops out.
    await b.operator.create(configMap(ns, "two")); // counted #1
    await b.operator.patch(configMap(ns, "two", { a: "2" }), { type: "merge" }).catch(() => undefined); // fail-with: 500
    await b.operator.patch(configMap(ns, "two", { a: "2" }), { type: "merge" }); // counted #2 (a 500 is no success)
    await b.operator.patch(configMap(ns, "two", { a: "2" }), { type: "merge" }); // a no-op: not counted
    await b.operator.create(configMap(ns, "other")).catch(() => undefined); // counted #3: crash-after, diverged
    expect(b.proxy.writeLog.query({ actor: "operator" }).map((e) => e.effect)).toEqual([
      "created",
      "rejected",
      "changed",
      "no-op",
      "created",
    ]);

    expect(reached.outcome()).toMatchObject({
      status: "reached",
      evidence: { hit: { verb: "patch", name: "two", code: 500 } },
    });
    expect(diverged.outcome()).toMatchObject({
      status: "diverged",
      expected: { name: "three" },
      evidence: { hit: { verb: "create", name: "other", code: 201 } },
    });
    expect(never.outcome()).toEqual({ status: "not-reached" });
  });
});

describe("crash-after", () => {
  it("drops every operator write of the crashed run, before any fault or read, and logs each drop", async () => {
    const b = await bench();
    let releaseKill!: () => void;
    const killing = new Promise<void>((resolve) => (releaseKill = resolve));
    let killStarted!: () => void;
    const started = new Promise<void>((resolve) => (killStarted = resolve));
    b.proxy.setCrashHandler(async () => {
      killStarted();
      await killing;
      return { signal: "SIGKILL", pids: [4242] };
    });
    b.proxy.beginOperatorRun(1);
    const crash = b.proxy.arm({ kind: "crash-after", match: { name: "line" } });
    const spare = b.proxy.arm({ kind: "fail-with", status: 500, match: { name: "during" } });

    const crashLine = b.operator.create(configMap(b.namespace, "line")).then(
      () => "answered",
      () => "cut",
    );
    await started;
    // Sent while the kill is under way, and after it: neither reaches the server nor consumes a fault.
    const during = b.operator.create(configMap(b.namespace, "during")).then(
      () => "answered",
      () => "cut",
    );
    await pollUntil(
      () =>
        b.proxy.writeLog.query({ name: "during" }).length > 0
          ? { done: true, value: 0 }
          : { done: false, reason: "not yet" },
      {
        description: "the drop to be logged",
        timeoutMs: 10_000,
      },
    );
    releaseKill();
    const fired = await crash.fired;
    const after = await b.operator.create(configMap(b.namespace, "after")).then(
      () => "answered",
      () => "cut",
    );
    expect([await crashLine, await during, after]).toEqual(["cut", "cut", "cut"]);

    const drops = b.proxy.writeLog.query({ actor: "operator", effect: "rejected" });
    expect(drops.map((e: WriteEntry) => [e.name, e.code, e.reason])).toEqual([
      ["during", 0, "DroppedAfterCrash"],
      ["after", 0, "DroppedAfterCrash"],
    ]);
    expect(fired.outcome.evidence).toMatchObject({
      kill: { signal: "SIGKILL", pids: [4242], run: 1 },
      dropped: [drops[0]?.seq],
    });
    expect(spare.outcome().status).toBe("not-reached");
    expect(await cluster.client.tryGet(ref(b.namespace, "line"))).toBeDefined();
    expect(await cluster.client.tryGet(ref(b.namespace, "during"))).toBeUndefined();
    expect(await cluster.client.tryGet(ref(b.namespace, "after"))).toBeUndefined();
    expect(b.proxy.writeLog.query({ actor: "kit" })).toEqual([]); // the kit read or wrote nothing for them

    // The next run is heard again.
    b.proxy.beginOperatorRun(2);
    await b.operator.create(configMap(b.namespace, "next"));
    expect(b.proxy.writeLog.query({ name: "next" })).toMatchObject([{ run: 2, effect: "created" }]);
  });
});

describe("crash-after whose kill fails", () => {
  it("reports failed, and the operator gets the server's real answer and goes on being heard", async () => {
    const b = await bench();
    b.proxy.setCrashHandler(() => Promise.reject(new Error("kill: operation not permitted")));
    const crash = b.proxy.arm({ kind: "crash-after", match: { name: "line" } });
    const created = await b.operator.create(configMap(b.namespace, "line"));
    expect(created.metadata?.uid).toBeTruthy();
    await expect(crash.fired).rejects.toThrow("operation not permitted");
    expect(crash.outcome()).toEqual({ status: "failed", error: "kill: operation not permitted" });
    await b.operator.create(configMap(b.namespace, "later"));
    expect(b.proxy.writeLog.query({ actor: "operator" }).map((e) => [e.name, e.effect])).toEqual([
      ["line", "created"],
      ["later", "created"],
    ]);
  });
});

describe("the read log", () => {
  it("records gets, lists and watches with their resourceVersion parameters and answers", async () => {
    const b = await bench();
    await b.operator.tryGet(ref(b.namespace, "missing"));
    const { resourceVersion } = await b.operator.listWithVersion("v1", "ConfigMap", {
      namespace: b.namespace,
    });
    const watch = await b.operator.watch(
      { apiVersion: "v1", kind: "ConfigMap", namespace: b.namespace },
      () => undefined,
      { resourceVersion },
    );
    watch.stop();
    const reads = b.proxy.readLog.query({ actor: "operator", resource: "configmaps" });
    expect(reads.map((r) => [r.verb, r.name, r.code, r.resourceVersion])).toEqual([
      ["get", "missing", 404, undefined],
      ["list", undefined, 200, undefined],
      ["watch", undefined, 200, resourceVersion],
    ]);
  });
});

describe("the watch deliveries", () => {
  it("records every watch event it passes to the operator, placed among the writes", async () => {
    const b = await bench();
    const { resourceVersion } = await b.operator.listWithVersion("v1", "ConfigMap", {
      namespace: b.namespace,
    });
    const watch = await b.operator.watch(
      { apiVersion: "v1", kind: "ConfigMap", namespace: b.namespace },
      () => undefined,
      { resourceVersion },
    );
    const delivered = (n: number) =>
      pollUntil(
        () =>
          b.proxy.readLog.delivered.length >= n
            ? { done: true, value: undefined }
            : { done: false, reason: `${b.proxy.readLog.delivered.length} event(s)` },
        { description: `${n} delivered event(s)`, timeoutMs: 10_000 },
      );
    const first = await b.operator.create(configMap(b.namespace, "seen"));
    await delivered(1);
    const second = await b.operator.create(configMap(b.namespace, "next"));
    await delivered(2);
    watch.stop();
    const [w1, w2] = b.proxy.writeLog.query({ actor: "operator" });
    const [e1, e2] = b.proxy.readLog.delivered;
    expect(e1).toMatchObject({
      type: "ADDED",
      group: "",
      resource: "configmaps",
      namespace: b.namespace,
      name: "seen",
      resourceVersion: first.metadata?.resourceVersion,
    });
    expect(e2).toMatchObject({
      type: "ADDED",
      name: "next",
      resourceVersion: second.metadata?.resourceVersion,
    });
    // The first event was passed on after the first write was sent and before the second was.
    expect(e1?.beforeWriteSeq).toBeGreaterThan(w1?.seq ?? Infinity);
    expect(e1?.beforeWriteSeq).toBeLessThanOrEqual(w2?.seq ?? -1);
    expect(e2?.beforeWriteSeq).toBeGreaterThan(w2?.seq ?? Infinity);
  });
});

describe("the watch seam", () => {
  it.each([
    ["JSON", "application/json"],
    ["protobuf", "application/vnd.kubernetes.protobuf;stream=watch"],
  ])("passes a %s watch through byte for byte, cut into the same events", async (_name, accept) => {
    const b = await bench();
    const { resourceVersion } = await cluster.client.listWithVersion("v1", "ConfigMap", {
      namespace: b.namespace,
    });
    const path = `/api/v1/namespaces/${b.namespace}/configmaps?watch=1&resourceVersion=${resourceVersion}`;
    const config = new KubeConfig();
    config.loadFromFile(cluster.access.kubeconfigPath);
    const tls: https.RequestOptions = {};
    await config.applyToHTTPSOptions(tls);
    const operatorConfig = new KubeConfig();
    operatorConfig.loadFromFile(b.kubeconfig);
    const streams = [
      openWatch(
        new URL(path, cluster.access.apiServerUrl),
        { ca: tls.ca, cert: tls.cert, key: tls.key },
        accept,
      ),
      openWatch(
        new URL(path, b.proxy.url),
        {
          ca: b.proxy.certificateAuthority,
          headers: { Authorization: `Bearer ${operatorConfig.getCurrentUser()?.token}` },
        },
        accept,
      ),
    ];
    await Promise.all(streams.map((s) => s.opened));
    for (let i = 0; i < 4; i++) {
      await cluster.client.create(configMap(b.namespace, `w-${i}`, { i: "0".repeat(i * 3000) }));
      await cluster.client.patch(configMap(b.namespace, `w-${i}`, { i: "1" }), { type: "merge" });
    }
    await cluster.client.delete(ref(b.namespace, "w-0"));
    const [direct, proxied] = streams;
    await pollUntil(
      () =>
        direct && proxied && direct.events() >= 9 && proxied.events() >= 9
          ? { done: true, value: undefined }
          : { done: false, reason: `${direct?.events()} / ${proxied?.events()} events` },
      { description: "9 events on both watches", timeoutMs: 10_000 },
    );
    for (const s of streams) s.close();
    expect(proxied?.contentType).toBe(direct?.contentType);
    expect(proxied?.bytes().equals(direct?.bytes() ?? Buffer.alloc(0))).toBe(true);
  });
});

/** A raw watch whose bytes are kept, with its events counted by the same splitter the proxy uses. */
function openWatch(url: URL, options: https.RequestOptions, accept: string) {
  const chunks: Buffer[] = [];
  let contentType = "";
  let splitter: WatchEventSplitter | undefined;
  let events = 0;
  let request!: ReturnType<typeof https.request>;
  const opened = new Promise<void>((resolve, reject) => {
    request = https.request(url, { ...options, headers: { ...options.headers, Accept: accept } }, (res) => {
      contentType = String(res.headers["content-type"]);
      splitter = new WatchEventSplitter(contentType);
      res.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        events += splitter?.push(chunk).length ?? 0;
      });
      res.on("error", () => undefined);
      resolve();
    });
    request.on("error", reject);
    request.end();
  });
  return {
    opened,
    get contentType() {
      return contentType;
    },
    events: () => events,
    bytes: () => Buffer.concat(chunks),
    close: () => request.destroy(),
  };
}

describe("the operator launcher and the proxy", () => {
  it("tells an operator that never reached the proxy from one that did but never watched its resource, and withholds CI credentials", async () => {
    const b = await bench();
    const envFile = join(b.workDir, "env.txt");
    process.env.GITHUB_TOKEN = "ghs_not_for_the_operator";
    try {
      const silent = new OperatorProcess({
        command: { argv: ["sh", "-c", `env > ${envFile}; exec sleep 600`] },
        proxy: b.proxy,
        customResource: WEBAPP_RESOURCE,
        workDir: b.workDir,
        kube: cluster.client,
        startTimeoutMs: 1_500,
      });
      const error = await silent.start().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InfrastructureError);
      expect(error).toMatchObject({ code: "operator/no-proxy-contact" });
      expect((error as Error).message).toContain("does the operator honour KUBECONFIG?");
      const env = await readFile(envFile, "utf8");
      expect(env).not.toContain("ghs_not_for_the_operator");
      expect(env).toContain(`KUBECONFIG=${join(b.workDir, "operator.kubeconfig")}`);
    } finally {
      delete process.env.GITHUB_TOKEN;
    }
    const kubectl = join(kwokConfig("x").binDir, "kubectl");
    const chatty = new OperatorProcess({
      command: {
        argv: ["sh", "-c", `while true; do ${kubectl} get --raw /version >/dev/null; sleep 0.2; done`],
      },
      proxy: b.proxy,
      customResource: WEBAPP_RESOURCE,
      workDir: b.workDir,
      kube: cluster.client,
      startTimeoutMs: 2_000,
    });
    const error = await chatty.start().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "operator/start-timeout" });
    expect((error as Error).message).toContain(
      "never listed or watched webapps.demo.reconcile-conformance.dev",
    );
  });
});
