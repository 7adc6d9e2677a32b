import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WatchHandle } from "../../src/kube/kube-client.js";
import { OperatorProcess } from "../../src/operator/operator-process.js";
import { ApiProxy } from "../../src/proxy/api-proxy.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import {
  exampleOperatorBinary,
  installWebAppCrd,
  readExampleYaml,
  sampleWebApp,
  waitConverged,
  WEBAPP_API_VERSION,
  WEBAPP_RESOURCE,
} from "../support/webapp-example.js";

// The bundled example operator, run as a process behind the kit's proxy the
// way users' operators will be, against a real kwok cluster: it converges the
// sample, follows both spec updates of its contract file, and then stays quiet.

const apiVersion = WEBAPP_API_VERSION;
const QUIET_WINDOW_MS = 10_000;

let cluster: TestCluster;
let proxy: ApiProxy | undefined;
let operator: OperatorProcess | undefined;
let namespace: string;

beforeAll(async () => {
  const binary = exampleOperatorBinary();
  cluster = await startTestCluster("rc-webapp");
  await installWebAppCrd(cluster.client);
  namespace = `webapp-${randomBytes(3).toString("hex")}`;
  await cluster.client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  proxy = await ApiProxy.start({
    upstream: { kubeconfigPath: cluster.access.kubeconfigPath, context: cluster.access.context },
  });
  const launched = new OperatorProcess({
    command: { argv: [binary, `--watch-namespace=${namespace}`] },
    proxy,
    customResource: WEBAPP_RESOURCE,
    workDir: await mkdtemp(join(tmpdir(), "rc-webapp-")),
    kube: cluster.client,
  });
  proxy.setCrashHandler(() => launched.crash());
  operator = launched;
  await operator.start();
});

afterAll(async () => {
  await operator?.stop();
  await proxy?.close();
  cluster?.client.close();
  await cluster?.provider.delete();
});

describe("example operator (reference)", () => {
  it("converges the sample, follows both spec updates, then makes no write for 10 s", async () => {
    const sample = await sampleWebApp(namespace);
    const name = sample.metadata?.name ?? "";
    await cluster.client.create(sample);
    const app = await waitConverged(cluster.client, namespace, name);
    const uid = app.metadata?.uid ?? "";

    const children = [
      { apiVersion: "apps/v1", kind: "Deployment", name },
      { apiVersion: "v1", kind: "Service", name },
      { apiVersion: "v1", kind: "ConfigMap", name: `registration-${uid}` },
    ];
    const uids = new Map<string, string>();
    for (const child of children) {
      const object = await cluster.client.get({ ...child, namespace });
      expect(object.metadata?.ownerReferences, `${child.kind} ${child.name}`).toEqual([
        expect.objectContaining({ kind: "WebApp", name, uid, controller: true }),
      ]);
      uids.set(child.kind, object.metadata?.uid ?? "");
    }

    // The contract file's two spec updates: scale, then port and args.
    const contract = await readExampleYaml<{ updates: { spec: Record<string, unknown> }[] }>(
      "reconcile-conformance.yaml",
    );
    expect(contract.updates).toHaveLength(2);
    for (const update of contract.updates) {
      await cluster.client.patch({
        apiVersion,
        kind: "WebApp",
        metadata: { name, namespace },
        spec: update.spec,
      });
      await waitConverged(cluster.client, namespace, name);
    }
    const service = await cluster.client.get({ apiVersion: "v1", kind: "Service", name, namespace });
    const ports = (service.spec as { ports: { port: number }[] }).ports;
    expect(ports[0]?.port).toBe(contract.updates[1]?.spec.port);
    const deployment = await cluster.client.get({
      apiVersion: "apps/v1",
      kind: "Deployment",
      name,
      namespace,
    });
    expect((deployment.spec as { replicas: number }).replicas).toBe(contract.updates[0]?.spec.replicas);
    for (const child of children.slice(0, 2)) {
      const object = await cluster.client.get({ ...child, namespace });
      expect(object.metadata?.uid, `${child.kind} kept its identity`).toBe(uids.get(child.kind));
    }

    // Quiet: no write request at all through the proxy, and no change to the
    // objects only the operator writes (the CR, the Service, the registration).
    const writeLog = proxy?.writeLog;
    const before = writeLog?.lastSeq ?? 0;
    expect(writeLog?.query({ actor: "operator" }).length).toBeGreaterThan(0);
    const events: string[] = [];
    const watches: WatchHandle[] = [];
    for (const target of [{ apiVersion, kind: "WebApp" }, ...children.slice(1)]) {
      const { resourceVersion } = await cluster.client.listWithVersion(target.apiVersion, target.kind, {
        namespace,
      });
      watches.push(
        await cluster.client.watch(
          { apiVersion: target.apiVersion, kind: target.kind, namespace },
          (type, object) => {
            if (type !== "BOOKMARK") events.push(`${type} ${target.kind} ${object.metadata?.name}`);
          },
          { resourceVersion },
        ),
      );
    }
    await delay(QUIET_WINDOW_MS); // the observation window itself, not a wait for something to happen
    for (const watch of watches) watch.stop();

    expect(writeLog?.query({ after: before })).toEqual([]);
    expect(proxy?.inFlightWrites).toBe(0);
    expect(events).toEqual([]);
    expect(operator?.running).toBe(true);
  });
});
