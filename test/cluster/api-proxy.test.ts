import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AbortedError, InfrastructureError } from "../../src/errors.js";
import { KubeClient, type KubeObject } from "../../src/kube/kube-client.js";
import { OperatorProcess } from "../../src/operator/operator-process.js";
import { isProcessAlive } from "../../src/process/process-table.js";
import { ApiProxy, CONCURRENT_WRITE_ANNOTATION } from "../../src/proxy/api-proxy.js";
import type { DeliveredEvent, ReadEntry } from "../../src/proxy/read-log.js";
import type { WriteEntry } from "../../src/proxy/write-log.js";
import { pollUntil } from "../../src/util/poll.js";
import { kwokConfig, startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import {
  exampleOperatorBinary,
  installWebAppCrd,
  sampleWebApp,
  waitConverged,
  WEBAPP_API_VERSION,
  WEBAPP_RESOURCE,
} from "../support/webapp-example.js";

// The proxy and the launcher with the example operator on a real kwok cluster.

let cluster: TestCluster;
let binary: string;

beforeAll(async () => {
  binary = exampleOperatorBinary();
  cluster = await startTestCluster("rc-proxy");
  await installWebAppCrd(cluster.client);
});

afterAll(async () => {
  cluster?.client.close();
  await cluster?.provider.delete();
});

interface Harness {
  readonly namespace: string;
  readonly proxy: ApiProxy;
  readonly operator: OperatorProcess;
  readonly workDir: string;
}

const opened: Harness[] = [];
const everyPid = new Set<number>();

/** A namespace, a proxy and the example operator behind it (not started). */
async function harness(): Promise<Harness> {
  const namespace = `p-${randomBytes(3).toString("hex")}`;
  await cluster.client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  const workDir = await mkdtemp(join(tmpdir(), "rc-proxy-test-"));
  const proxy = await ApiProxy.start({
    upstream: { kubeconfigPath: cluster.access.kubeconfigPath, context: cluster.access.context },
    logDir: workDir,
  });
  const operator = new OperatorProcess({
    command: { argv: [binary, `--watch-namespace=${namespace}`] },
    proxy,
    customResource: WEBAPP_RESOURCE,
    workDir,
    kube: cluster.client,
  });
  proxy.setCrashHandler(() => operator.crash());
  const h = { namespace, proxy, operator, workDir };
  opened.push(h);
  return h;
}

async function startOperator(h: Harness): Promise<void> {
  await h.operator.start();
  for (const pid of h.operator.processIds()) everyPid.add(pid);
}

afterEach(async () => {
  for (const h of opened.splice(0)) {
    await h.operator.stop();
    await h.proxy.close();
  }
  // Test 6 of the issue, after every test: nothing the launcher started is alive.
  expect([...everyPid].filter(isProcessAlive)).toEqual([]);
  everyPid.clear();
});

const operatorWrites = (h: Harness): WriteEntry[] =>
  h.proxy.writeLog.query({ actor: "operator", withoutTags: true });
const summary = (entries: WriteEntry[]) =>
  entries.map((e) => `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ""} ${e.code}`);

describe("API proxy with the example operator", () => {
  it("records the operator's creates and status write, in order, with codes and uids", async () => {
    const h = await harness();
    await startOperator(h);
    const sample = await sampleWebApp(h.namespace);
    await cluster.client.create(sample);
    const app = await waitConverged(cluster.client, h.namespace, sample.metadata?.name ?? "");

    const writes = operatorWrites(h);
    // Every successful write names its object's uid and new resourceVersion. (A status write may
    // also meet a 409 when the operator's cache lags its own last write; it retries.)
    const succeeded = writes.filter((w) => w.code < 300);
    // The finalizer first, before anything outside the owner tree exists; then the children and
    // the directory entry; then the status.
    expect(summary(succeeded).slice(0, 6)).toEqual([
      "update webapps 200",
      "create deployments 201",
      "create services 201",
      "create configmaps 201",
      "create configmaps 201",
      "update webapps/status 200",
    ]);
    const [finalizer, deployment, service, configmap, directory] = succeeded;
    expect(finalizer).toMatchObject({ name: "hello", effect: "changed", run: 1 });
    expect(deployment).toMatchObject({
      group: "apps",
      namespace: h.namespace,
      name: "hello",
      effect: "created",
      run: 1,
    });
    expect(succeeded[5]).toMatchObject({ effect: "changed", run: 1 });
    const live = await cluster.client.get({
      apiVersion: "v1",
      kind: "Service",
      name: "hello",
      namespace: h.namespace,
    });
    expect(service?.uid).toBe(live.metadata?.uid);
    expect(configmap?.name).toBe(`registration-${app.metadata?.uid}`);
    expect(directory?.name).toBe(`directory-${app.metadata?.uid}`);
    expect(succeeded.filter((w) => !(w.seq > 0 && w.uid && w.resourceVersion))).toEqual([]);
    expect(writes.filter((w) => w.code >= 300).map((w) => w.code)).toEqual(
      writes.filter((w) => w.code >= 300).map(() => 409),
    );
    // The NDJSON file mirrors the log.
    await h.proxy.writeLog.flush();
    const lines = (await readFile(join(h.workDir, "writes.ndjson"), "utf8")).trim().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as WriteEntry).seq)).toEqual(
      h.proxy.writeLog.query().map((e) => e.seq),
    );
    // So do the read log and the watch events the operator was given.
    await h.proxy.readLog.flush();
    const reads = (await readFile(join(h.workDir, "reads.ndjson"), "utf8")).trim().split("\n");
    expect(reads.map((l) => (JSON.parse(l) as ReadEntry).seq)).toEqual(
      h.proxy.readLog.query().map((e) => e.seq),
    );
    expect(reads.length).toBeGreaterThan(0);
    const events = (await readFile(join(h.workDir, "watch-events.ndjson"), "utf8")).trim().split("\n");
    expect(events.map((l) => JSON.parse(l) as DeliveredEvent)).toEqual(h.proxy.readLog.delivered);
    expect(events.length).toBeGreaterThan(0);
  });

  it("crash-after on the Service create: the operator dies, the Service exists, status is unwritten; the restart reuses it", async () => {
    const h = await harness();
    await startOperator(h);
    const crash = h.proxy.arm({ kind: "crash-after", match: { verb: "create", resource: "services" } });
    const pidsBefore = h.operator.processIds();
    await cluster.client.create(await sampleWebApp(h.namespace));
    const fired = await crash.fired;

    expect(pidsBefore.filter(isProcessAlive)).toEqual([]);
    const created = h.proxy.writeLog
      .query({ resource: "services", verb: "create" })
      .find((e) => e.seq === fired.seq);
    expect(created).toMatchObject({ code: 201, effect: "created", fault: crash.id, run: 1 });
    expect(fired.outcome).toMatchObject({
      status: "reached",
      evidence: { hit: { seq: fired.seq }, kill: { signal: "SIGKILL", run: 1 } },
    });
    expect(fired.outcome.evidence.kill?.pids).toEqual(expect.arrayContaining(pidsBefore));
    // The operator never heard that its create succeeded: its own request log (one line per answered
    // write) has the Deployment create before it, and nothing for the Service.
    const runLog = await readFile(h.operator.logFiles[0] ?? "", "utf8");
    const answered = runLog
      .split("\n")
      .filter((line) => line.includes('"write"') || line.includes("\twrite\t"));
    expect(answered.some((line) => line.includes("Deployment") && line.includes('"create"'))).toBe(true);
    expect(answered.filter((line) => line.includes('"Service"'))).toEqual([]);
    const service = await cluster.client.get({
      apiVersion: "v1",
      kind: "Service",
      name: "hello",
      namespace: h.namespace,
    });
    expect(service.metadata?.uid).toBe(created?.uid);
    const app = await cluster.client.get({
      apiVersion: WEBAPP_API_VERSION,
      kind: "WebApp",
      name: "hello",
      namespace: h.namespace,
    });
    expect(app.status).toBeUndefined();
    expect(h.proxy.writeLog.query({ resource: "webapps", subresource: "status" })).toEqual([]);

    await h.operator.restart();
    for (const pid of h.operator.processIds()) everyPid.add(pid);
    await waitConverged(cluster.client, h.namespace, "hello");
    const after = await cluster.client.get({
      apiVersion: "v1",
      kind: "Service",
      name: "hello",
      namespace: h.namespace,
    });
    expect(after.metadata?.uid).toBe(created?.uid);
    expect(h.proxy.writeLog.query({ resource: "services", verb: "create", actor: "operator" })).toHaveLength(
      1,
    );
  });

  it("replays a baseline's write sequence by ordinal: a crash after the 4th counted write hits the baseline's 4th, a name derived from the UID included", async () => {
    const baseline = await harness();
    await startOperator(baseline);
    await cluster.client.create(await sampleWebApp(baseline.namespace));
    await waitConverged(cluster.client, baseline.namespace, "hello");
    await baseline.proxy.waitQuiet({ quietMs: 500, timeoutMs: 30_000 });
    const sequence = baseline.proxy.writeLog
      .query({ actor: "operator", namespace: baseline.namespace, withoutTags: true, succeeded: true })
      .filter((e) => e.effect !== "no-op");
    // (The 1st is the finalizer's update, the 2nd and 3rd the Deployment's and the Service's creates.)
    const fourth = sequence[3];
    expect(fourth).toMatchObject({ verb: "create", resource: "configmaps" });
    expect(fourth?.name).toMatch(/^registration-[0-9a-f-]{36}$/);

    const h = await harness();
    await startOperator(h);
    const crash = h.proxy.arm({
      kind: "crash-after",
      match: { namespace: h.namespace, ordinal: 4, excludeNoOps: true },
      ...(fourth ? { expect: fourth } : {}),
    });
    const app = await cluster.client.create(await sampleWebApp(h.namespace));
    const fired = await crash.fired;
    expect(fired.outcome.status).toBe("reached");
    expect(fired.outcome.evidence.hit.name).toBe(`registration-${app.metadata?.uid}`);
    expect(fired.outcome.evidence.hit.name).not.toBe(fourth?.name);
    await h.operator.restart();
    for (const pid of h.operator.processIds()) everyPid.add(pid);
    await waitConverged(cluster.client, h.namespace, "hello");
    const creates = h.proxy.writeLog.query({
      actor: "operator",
      verb: "create",
      succeeded: true,
      withoutTags: true,
    });
    // The directory entry comes after the registration in the same reconcile: the restarted run makes it.
    expect(creates.map((e) => `${e.resource} run ${e.run}`)).toEqual([
      "deployments run 1",
      "services run 1",
      "configmaps run 1",
      "configmaps run 2",
    ]);
  });

  it("conflict-before on the first Deployment update: a real 409, the concurrent annotation survives convergence", async () => {
    const h = await harness();
    await startOperator(h);
    await cluster.client.create(await sampleWebApp(h.namespace));
    await waitConverged(cluster.client, h.namespace, "hello");
    const conflict = h.proxy.arm({
      kind: "conflict-before",
      match: { verb: "update", resource: "deployments", subresource: "" },
    });
    await cluster.client.patch({
      apiVersion: WEBAPP_API_VERSION,
      kind: "WebApp",
      metadata: { name: "hello", namespace: h.namespace },
      spec: { replicas: 2 },
    });
    const fired = await conflict.fired;

    const [kitWrite] = h.proxy.writeLog.query({ actor: "kit", resource: "deployments" });
    const rejected = h.proxy.writeLog
      .query({ actor: "operator", resource: "deployments", verb: "update" })
      .find((e) => e.seq === fired.seq);
    expect(kitWrite).toMatchObject({ verb: "patch", code: 200, effect: "changed", fault: conflict.id });
    expect(rejected).toMatchObject({ code: 409, reason: "Conflict", effect: "rejected", fault: conflict.id });
    expect(fired.outcome.evidence.kitWrite?.seq).toBe(kitWrite?.seq);
    // The kit's write reached the server between the operator's read and its write.
    expect(kitWrite?.seq).toBeLessThan(rejected?.seq ?? 0);

    await waitConverged(cluster.client, h.namespace, "hello");
    const deployment = await cluster.client.get({
      apiVersion: "apps/v1",
      kind: "Deployment",
      name: "hello",
      namespace: h.namespace,
    });
    expect((deployment.spec as { replicas: number }).replicas).toBe(2);
    expect(deployment.metadata?.annotations?.[CONCURRENT_WRITE_ANNOTATION]).toBeTruthy();
    const retries = h.proxy.writeLog.query({
      actor: "operator",
      resource: "deployments",
      verb: "update",
      after: fired.seq,
    });
    // Every retry is built on a fresh read: none resends the resourceVersion that conflicted. (A retry
    // may meet a real conflict of its own: the Deployment controller's status writes, scaling to 2,
    // move the resourceVersion too. One went through, or the replicas above would not be 2.)
    expect(retries.length).toBeGreaterThan(0);
    expect(retries.map((r) => r.sentResourceVersion)).not.toContain(rejected?.sentResourceVersion);
    expect(retries.map((r) => r.code)).toContain(200);
  });

  it("fail-with 500 on the status write: the operator retries and converges", async () => {
    const h = await harness();
    await startOperator(h);
    const failure = h.proxy.arm({
      kind: "fail-with",
      status: 500,
      match: { verb: "update", resource: "webapps", subresource: "status" },
    });
    await cluster.client.create(await sampleWebApp(h.namespace));
    const fired = await failure.fired;
    await waitConverged(cluster.client, h.namespace, "hello");
    const operatorStatusWrites = () =>
      h.proxy.writeLog.query({ resource: "webapps", subresource: "status", actor: "operator" });
    // The proxy logs a write when its answer has come back through it; the kit's read can see the
    // stored status a moment before that, so the successful retry is awaited in the log, not assumed.
    await pollUntil(
      () =>
        operatorStatusWrites()
          .slice(1)
          .some((w) => w.code === 200)
          ? { done: true, value: undefined }
          : { done: false, reason: "no successful status write logged after the refused one" },
      { timeoutMs: 10_000, description: "the operator's status retry in the write log" },
    ).catch(() => undefined);
    const statusWrites = operatorStatusWrites();
    expect(statusWrites[0]).toMatchObject({
      seq: fired.seq,
      code: 500,
      effect: "rejected",
      fault: failure.id,
    });
    expect(statusWrites.slice(1).some((w) => w.code === 200)).toBe(true);
  });

  it("passes watches through event for event, and kubectl works through it (get, apply, protobuf)", async () => {
    const h = await harness();
    const proxyKubeconfig = await h.proxy.writeKubeconfig(join(h.workDir, "kubeconfig"));
    const viaProxy = KubeClient.fromKubeconfig(proxyKubeconfig);
    const { resourceVersion } = await cluster.client.listWithVersion("v1", "ConfigMap", {
      namespace: h.namespace,
    });
    const direct: string[] = [];
    const proxied: string[] = [];
    const record = (into: string[]) => (type: string, object: KubeObject) => {
      if (object.metadata?.name?.startsWith("w-"))
        into.push(`${type} ${object.metadata.name} ${object.metadata.resourceVersion}`);
    };
    const target = { apiVersion: "v1", kind: "ConfigMap", namespace: h.namespace };
    const watches = [
      await cluster.client.watch(target, record(direct), { resourceVersion }),
      await viaProxy.watch(target, record(proxied), { resourceVersion }),
    ];
    for (let i = 0; i < 5; i++) {
      await cluster.client.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `w-${i}`, namespace: h.namespace },
        data: { i: "0" },
      });
      await cluster.client.patch({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `w-${i}`, namespace: h.namespace },
        data: { i: "1" },
      });
    }
    await cluster.client.delete({ apiVersion: "v1", kind: "ConfigMap", name: "w-0", namespace: h.namespace });
    await pollUntil(
      () =>
        proxied.length >= 11 && direct.length >= 11
          ? { done: true, value: undefined }
          : { done: false, reason: `${proxied.length}/${direct.length} events` },
      {
        description: "11 events on both watches",
        timeoutMs: 10_000,
      },
    );
    for (const w of watches) w.stop();
    viaProxy.close();
    expect(proxied).toEqual(direct);

    const kubectl = join(kwokConfig("x").binDir, "kubectl");
    const run = (args: string[], input?: string) =>
      new Promise<string>((resolve, reject) => {
        const child = execFile(
          kubectl,
          ["--kubeconfig", proxyKubeconfig, ...args],
          (error, stdout, stderr) =>
            error ? reject(new Error(`kubectl ${args.join(" ")}: ${stderr}`)) : resolve(stdout),
        );
        child.stdin?.end(input ?? "");
      });
    expect((await run(["get", "configmaps", "-n", h.namespace, "-o", "name"])).split("\n")).toContain(
      "configmap/w-1",
    );
    await run(
      ["apply", "-f", "-"],
      JSON.stringify({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "applied", namespace: h.namespace },
        data: { a: "b" },
      }),
    );
    const applied = await cluster.client.get({
      apiVersion: "v1",
      kind: "ConfigMap",
      name: "applied",
      namespace: h.namespace,
    });
    expect(applied.data).toEqual({ a: "b" });
    expect(h.proxy.writeLog.query({ resource: "configmaps", name: "applied", verb: "create" })).toHaveLength(
      1,
    );

    // A protobuf answer arrives byte for byte as the API server sent it.
    const path = `/api/v1/namespaces/${h.namespace}/configmaps/w-1`;
    const viaProxyBytes = await rawGet(new URL(path, h.proxy.url), proxyAuth(proxyKubeconfig));
    const directBytes = await rawGet(new URL(path, cluster.access.apiServerUrl), await tlsOptions());
    expect(viaProxyBytes.contentType).toBe("application/vnd.kubernetes.protobuf");
    expect(viaProxyBytes.body.equals(directBytes.body)).toBe(true);
  });

  it("forwards as the impersonated identity when asked, so the operator's own RBAC applies", async () => {
    const proxy = await ApiProxy.start({
      upstream: { kubeconfigPath: cluster.access.kubeconfigPath, context: cluster.access.context },
      impersonate: { user: "system:serviceaccount:ops:webapp-operator", groups: ["system:serviceaccounts"] },
    });
    try {
      const workDir = await mkdtemp(join(tmpdir(), "rc-impersonate-"));
      const client = KubeClient.fromKubeconfig(await proxy.writeKubeconfig(join(workDir, "kubeconfig")));
      const review = await client.create({
        apiVersion: "authentication.k8s.io/v1",
        kind: "SelfSubjectReview",
        metadata: { name: "me" },
      });
      client.close();
      expect((review.status as { userInfo: { username: string; groups: string[] } }).userInfo).toMatchObject({
        username: "system:serviceaccount:ops:webapp-operator",
        groups: expect.arrayContaining(["system:serviceaccounts"]) as unknown,
      });
    } finally {
      await proxy.close();
    }
  });

  it("judges quiet by the operator's writes in its scenario's namespace: writes elsewhere are logged, not counted", async () => {
    const [mine, other] = [`q-${randomBytes(3).toString("hex")}`, `q-${randomBytes(3).toString("hex")}`];
    for (const name of [mine, other]) {
      await cluster.client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    }
    const proxy = await ApiProxy.start({
      upstream: { kubeconfigPath: cluster.access.kubeconfigPath, context: cluster.access.context },
      quietNamespace: mine,
    });
    const workDir = await mkdtemp(join(tmpdir(), "rc-quiet-scope-"));
    // The operator's credentials: these writes are the operator's as the proxy sees them.
    const asOperator = KubeClient.fromKubeconfig(await proxy.writeKubeconfig(join(workDir, "kubeconfig")));
    const configMap = (namespace: string, name: string): KubeObject => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace },
    });
    try {
      await asOperator.create(configMap(mine, "first"));
      await new Promise((resolve) => setTimeout(resolve, 400));
      await asOperator.create(configMap(other, "elsewhere"));
      expect(proxy.operatorIdleMs).toBeGreaterThanOrEqual(400);
      await asOperator.create(configMap(mine, "second"));
      expect(proxy.operatorIdleMs).toBeLessThan(400);
      expect(
        proxy.writeLog.query({ actor: "operator" }).map((e) => `${e.namespace ?? ""}/${e.name ?? ""}`),
      ).toEqual([`${mine}/first`, `${other}/elsewhere`, `${mine}/second`]);
    } finally {
      asOperator.close();
      await proxy.close();
    }
  });

  it("hangs a write for fail-with hang: never answered, reported by waitQuiet instead of waited on", async () => {
    const h = await harness();
    const auth = proxyAuth(await h.proxy.writeKubeconfig(join(h.workDir, "kubeconfig")));
    const hang = h.proxy.arm({
      kind: "fail-with",
      status: "hang",
      match: { verb: "create", resource: "configmaps" },
    });
    let answered = false;
    const body = JSON.stringify({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "never", namespace: h.namespace },
    });
    const request = https.request(
      new URL(`/api/v1/namespaces/${h.namespace}/configmaps`, h.proxy.url),
      { method: "POST", ca: auth.ca, headers: { ...auth.headers, "Content-Type": "application/json" } },
      () => (answered = true),
    );
    request.on("error", () => undefined);
    request.end(body);
    const fired = await hang.fired;
    // waitQuiet comes back (it does not wait for a write that will never complete) and names it.
    const quiet = await h.proxy.waitQuiet({ quietMs: 300, timeoutMs: 10_000 });
    expect(quiet.hung.map((e) => e.seq)).toEqual([fired.seq]);
    expect(h.proxy.inFlightWrites).toBe(0);
    expect(answered).toBe(false);
    request.destroy();
    expect(
      await cluster.client.tryGet({
        apiVersion: "v1",
        kind: "ConfigMap",
        name: "never",
        namespace: h.namespace,
      }),
    ).toBeUndefined();
    expect(h.proxy.writeLog.query({ resource: "configmaps" })).toMatchObject([
      { code: 0, effect: "rejected", fault: hang.id },
    ]);
  });

  it("removes a crashed leader's Lease so the restarted operator leads at once", async () => {
    const h = await harness();
    const leaderElected = new OperatorProcess({
      command: {
        argv: [
          binary,
          `--watch-namespace=${h.namespace}`,
          "--leader-elect",
          `--leader-election-namespace=${h.namespace}`,
        ],
      },
      proxy: h.proxy,
      customResource: WEBAPP_RESOURCE,
      workDir: h.workDir,
      kube: cluster.client,
    });
    const leaseRef = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      name: "webapp-operator.demo.reconcile-conformance.dev",
      namespace: h.namespace,
    };
    try {
      await leaderElected.start(); // controllers watch WebApps only once elected
      for (const pid of leaderElected.processIds()) everyPid.add(pid);
      const held = await cluster.client.get(leaseRef);
      await leaderElected.crash();
      expect(await cluster.client.tryGet(leaseRef)).toBeUndefined();
      await leaderElected.restart();
      for (const pid of leaderElected.processIds()) everyPid.add(pid);
      const renewed = await cluster.client.get(leaseRef);
      const holder = (lease: KubeObject) => (lease.spec as { holderIdentity?: string }).holderIdentity;
      expect(holder(renewed)).toBeTruthy();
      expect(holder(renewed)).not.toBe(holder(held));
    } finally {
      await leaderElected.stop();
    }
  });

  it("passes a large list through byte for byte", async () => {
    const h = await harness();
    const filler = "x".repeat(4096);
    await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        cluster.client.create({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: `big-${i}`, namespace: h.namespace },
          data: { filler },
        }),
      ),
    );
    // The same list both ways: at one exact resourceVersion, so that a write anywhere in the cluster
    // between the two requests (a lease renewal, a kwok heartbeat) cannot change the answer.
    const { resourceVersion } = await cluster.client.listWithVersion("v1", "ConfigMap", {
      namespace: h.namespace,
    });
    const path = `/api/v1/namespaces/${h.namespace}/configmaps?resourceVersion=${resourceVersion}&resourceVersionMatch=Exact`;
    const viaProxy = await rawGet(
      new URL(path, h.proxy.url),
      proxyAuth(await h.proxy.writeKubeconfig(join(h.workDir, "kubeconfig"))),
      "application/json",
    );
    const direct = await rawGet(
      new URL(path, cluster.access.apiServerUrl),
      await tlsOptions(),
      "application/json",
    );
    expect(viaProxy.body.length).toBeGreaterThan(1_200_000);
    expect(viaProxy.body.equals(direct.body)).toBe(true);
  });

  it("reports an operator that exits before it starts, with the end of its log", async () => {
    const h = await harness();
    const failing = new OperatorProcess({
      command: { argv: ["sh", "-c", "echo 'cannot load config: no such context' >&2; exit 3"] },
      proxy: h.proxy,
      customResource: WEBAPP_RESOURCE,
      workDir: h.workDir,
      kube: cluster.client,
    });
    const error = await failing.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InfrastructureError);
    expect(error).toMatchObject({
      code: "operator/exited",
      message:
        "operator exited (3) before it watched webapps; its log ends with: cannot load config: no such context",
      details: ["cannot load config: no such context"],
    });
  });

  it("names the cause of an early exit from its log, with a hint for a missing webhook certificate", async () => {
    const h = await harness();
    // What a kubebuilder operator with webhooks on prints when no certificate is where it looks.
    const script = [
      `echo '2026-12-04T10:00:00Z INFO setup starting manager'`,
      `echo '2026-12-04T10:00:00Z ERROR setup problem running manager {"error": "open /tmp/k8s-webhook-server/serving-certs/tls.crt: no such file or directory"}' >&2`,
      `echo '2026-12-04T10:00:00Z INFO shutting down'`,
      "exit 1",
    ].join("; ");
    const failing = new OperatorProcess({
      command: { argv: ["sh", "-c", script] },
      proxy: h.proxy,
      customResource: WEBAPP_RESOURCE,
      workDir: h.workDir,
      kube: cluster.client,
    });
    const error = (await failing.start().catch((e: unknown) => e)) as InfrastructureError;
    expect(error.message).toMatch(
      /^operator exited \(1\) before it watched webapps; its log ends with: .*ERROR setup problem running manager .*tls\.crt: no such file or directory"\} — its webhook server has no serving certificate: /,
    );
    expect(error.message).toContain('ENABLE_WEBHOOKS: "false"');
  });

  it("leaves no operator process behind when a start is aborted", async () => {
    const h = await harness();
    const controller = new AbortController();
    // An operator that never watches WebApps: the start waits until aborted.
    const stuck = new OperatorProcess({
      command: { argv: ["sleep", "600"] },
      proxy: h.proxy,
      customResource: WEBAPP_RESOURCE,
      workDir: h.workDir,
      kube: cluster.client,
    });
    const starting = stuck.start(controller.signal);
    await pollUntil(
      () =>
        stuck.processIds().length > 0
          ? { done: true, value: undefined }
          : { done: false, reason: "not spawned" },
      {
        description: "the process to exist",
        timeoutMs: 5_000,
      },
    );
    const pids = stuck.processIds();
    controller.abort();
    await expect(starting).rejects.toBeInstanceOf(AbortedError);
    expect(pids.filter(isProcessAlive)).toEqual([]);
  });
});

/** The bearer token of a kubeconfig the proxy wrote, as request options. */
function proxyAuth(kubeconfigPath: string): { ca: Buffer; headers: Record<string, string> } {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfigPath);
  return {
    ca: Buffer.from(config.getCurrentCluster()?.caData ?? "", "base64"),
    headers: { Authorization: `Bearer ${config.getCurrentUser()?.token ?? ""}` },
  };
}

async function tlsOptions(): Promise<https.RequestOptions> {
  const config = new KubeConfig();
  config.loadFromFile(cluster.access.kubeconfigPath);
  const options: https.RequestOptions = {};
  await config.applyToHTTPSOptions(options);
  return { ca: options.ca, cert: options.cert, key: options.key };
}

function rawGet(
  url: URL,
  tls: https.RequestOptions,
  accept = "application/vnd.kubernetes.protobuf",
): Promise<{ contentType: string; body: Buffer }> {
  const transport = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const request = transport.request(
      url,
      { ...tls, headers: { ...tls.headers, Accept: accept } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (c: Buffer) => chunks.push(c));
        response.on("end", () =>
          resolve({ contentType: String(response.headers["content-type"]), body: Buffer.concat(chunks) }),
        );
      },
    );
    request.on("error", reject);
    request.end();
  });
}
