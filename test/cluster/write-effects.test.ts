import { KubeConfig } from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/kube/kube-client.js";
import { PATCH_CONTENT_TYPES, type PatchType } from "../../src/kube/patch-types.js";
import { ApiProxy } from "../../src/proxy/api-proxy.js";
import {
  editProtobufMetadata,
  encodeLengthDelimited,
  protobufWithResourceVersion,
} from "../../src/proxy/protobuf-metadata.js";
import type { WriteEntry } from "../../src/proxy/write-log.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import { installWebAppCrd, WEBAPP_API_VERSION } from "../support/webapp-example.js";

// Every row of the write-effect table (src/proxy/write-effect.ts), confirmed
// on a real API server: a client holding the operator's token writes through
// the proxy, and the entry the proxy logs must carry the effect the server
// actually had. JSON and protobuf bodies where client-go sends protobuf.

let cluster: TestCluster;
let proxy: ApiProxy;
let operatorToken: string;
let namespace: string;

beforeAll(async () => {
  cluster = await startTestCluster("rc-effects");
  await installWebAppCrd(cluster.client);
  proxy = await ApiProxy.start({
    upstream: { kubeconfigPath: cluster.access.kubeconfigPath, context: cluster.access.context },
  });
  const workDir = await mkdtemp(join(tmpdir(), "rc-effects-"));
  const config = new KubeConfig();
  config.loadFromFile(await proxy.writeKubeconfig(join(workDir, "kubeconfig")));
  operatorToken = config.getCurrentUser()?.token ?? "";
  namespace = `e-${randomBytes(3).toString("hex")}`;
  await cluster.client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
});

afterAll(async () => {
  await proxy?.close();
  cluster?.client.close();
  await cluster?.provider.delete();
});

const JSON_TYPE = "application/json";
const PROTOBUF = "application/vnd.kubernetes.protobuf";

interface Raw {
  readonly status: number;
  readonly body: Buffer;
}

/** One request as the operator: through the proxy, with its token. */
async function asOperator(
  method: string,
  path: string,
  options: { body?: Buffer | object; contentType?: string; accept?: string } = {},
): Promise<Raw> {
  const body =
    options.body === undefined || Buffer.isBuffer(options.body)
      ? options.body
      : Buffer.from(JSON.stringify(options.body));
  return rawRequest(
    new URL(path, proxy.url),
    { ca: proxy.certificateAuthority },
    method,
    {
      Authorization: `Bearer ${operatorToken}`,
      Accept: options.accept ?? JSON_TYPE,
      ...(body ? { "Content-Type": options.contentType ?? JSON_TYPE, "Content-Length": body.length } : {}),
    },
    body,
  );
}

/** A GET straight from the API server (not through the proxy). */
async function direct(path: string, accept = JSON_TYPE): Promise<Raw> {
  const config = new KubeConfig();
  config.loadFromFile(cluster.access.kubeconfigPath);
  const tls: https.RequestOptions = {};
  await config.applyToHTTPSOptions(tls);
  return rawRequest(
    new URL(path, cluster.access.apiServerUrl),
    { ca: tls.ca, cert: tls.cert, key: tls.key },
    "GET",
    {
      Accept: accept,
    },
  );
}

function rawRequest(
  url: URL,
  tls: https.RequestOptions,
  method: string,
  headers: http.OutgoingHttpHeaders,
  body?: Buffer,
): Promise<Raw> {
  const transport = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const request = transport.request(url, { ...tls, method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (c: Buffer) => chunks.push(c));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    request.on("error", reject);
    request.end(body);
  });
}

/** The entry the proxy logged for the operator's last write. */
function lastWrite(): WriteEntry {
  const entry = proxy.writeLog.query({ actor: "operator" }).at(-1);
  if (!entry) throw new Error("no operator write logged");
  return entry;
}

const configMaps = () => `/api/v1/namespaces/${namespace}/configmaps`;
const configMap = (name: string) => `${configMaps()}/${name}`;

async function freshConfigMap(data: Record<string, string> = { a: "1" }): Promise<KubeObject> {
  const name = `cm-${randomBytes(3).toString("hex")}`;
  return cluster.client.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data });
}

async function live(path: string): Promise<KubeObject> {
  return JSON.parse((await direct(path)).body.toString("utf8")) as KubeObject;
}

/** Appends a label to a protobuf object's metadata (ObjectMeta.labels is field 11, a map entry message). */
function withProtobufLabel(body: Buffer, key: string, value: string): Buffer {
  const entry = Buffer.concat([
    encodeLengthDelimited(1, Buffer.from(key)),
    encodeLengthDelimited(2, Buffer.from(value)),
  ]);
  const edited = editProtobufMetadata(body, (meta) =>
    Buffer.concat([meta, encodeLengthDelimited(11, entry)]),
  );
  if (!edited) throw new Error("not a protobuf object");
  return edited;
}

describe("write effects on a real API server", () => {
  it("create: created, with the final name of a generateName create and its uid (JSON and protobuf)", async () => {
    const answer = await asOperator("POST", configMaps(), {
      body: {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { generateName: "gen-", namespace },
        data: { a: "1" },
      },
    });
    expect(answer.status).toBe(201);
    const created = lastWrite();
    const stored = JSON.parse(answer.body.toString("utf8")) as KubeObject;
    expect(created).toMatchObject({
      verb: "create",
      effect: "created",
      generateName: "gen-",
      name: stored.metadata?.name,
      uid: stored.metadata?.uid,
    });
    expect(created.name).toMatch(/^gen-.{5}$/);

    // The same object sent back as protobuf, under a new generateName: client-go's way for built-in kinds.
    const proto = (await direct(configMap(stored.metadata?.name ?? ""), PROTOBUF)).body;
    const fresh = editProtobufMetadata(proto, (meta) =>
      Buffer.concat([
        encodeLengthDelimited(1, Buffer.from("")),
        encodeLengthDelimited(2, Buffer.from("pgen-")),
        encodeLengthDelimited(5, Buffer.from("")),
        encodeLengthDelimited(6, Buffer.from("")),
        meta.subarray(0, 0),
      ]),
    );
    const protoAnswer = await asOperator("POST", configMaps(), {
      body: fresh,
      contentType: PROTOBUF,
      accept: PROTOBUF,
    });
    expect(protoAnswer.status).toBe(201);
    const protoCreated = lastWrite();
    expect(protoCreated).toMatchObject({ effect: "created", generateName: "pgen-" });
    expect(protoCreated.name).toMatch(/^pgen-.{5}$/);
    expect((await live(configMap(protoCreated.name ?? ""))).metadata?.uid).toBe(protoCreated.uid);
  });

  it("a large write whose client accepts gzip: its answer is read (effect known) and the client still gets it whole", async () => {
    const before = await freshConfigMap({ big: "x".repeat(300_000) });
    const path = configMap(before.metadata?.name ?? "");
    const body = Buffer.from(JSON.stringify({ ...before, data: { big: "y".repeat(300_000) } }));
    const answer = await rawRequest(
      new URL(path, proxy.url),
      { ca: proxy.certificateAuthority },
      "PUT",
      {
        Authorization: `Bearer ${operatorToken}`,
        Accept: JSON_TYPE,
        "Accept-Encoding": "gzip",
        "Content-Type": JSON_TYPE,
        "Content-Length": body.length,
      },
      body,
    );
    expect(answer.status).toBe(200);
    const stored = JSON.parse(answer.body.toString("utf8")) as KubeObject;
    expect(lastWrite()).toMatchObject({
      effect: "changed",
      resourceVersion: stored.metadata?.resourceVersion,
    });
  });

  it("create answered 409 AlreadyExists: rejected", async () => {
    const existing = await freshConfigMap();
    const answer = await asOperator("POST", configMaps(), {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: existing.metadata?.name, namespace } },
    });
    expect(answer.status).toBe(409);
    expect(lastWrite()).toMatchObject({ effect: "rejected", reason: "AlreadyExists", code: 409 });
  });

  describe.each([
    { precondition: true, encoding: "json" },
    { precondition: false, encoding: "json" },
    { precondition: true, encoding: "protobuf" },
    { precondition: false, encoding: "protobuf" },
  ])("update (PUT), $encoding, with a precondition: $precondition", ({ precondition, encoding }) => {
    async function put(
      change: boolean,
    ): Promise<{ entry: WriteEntry; before: KubeObject; after: KubeObject }> {
      const before = await freshConfigMap();
      const path = configMap(before.metadata?.name ?? "");
      let body: Buffer;
      if (encoding === "json") {
        const object: KubeObject = {
          ...before,
          metadata: {
            ...before.metadata,
            resourceVersion: precondition ? before.metadata?.resourceVersion : undefined,
          },
          data: change ? { a: "2" } : before.data,
        };
        body = Buffer.from(JSON.stringify(object));
      } else {
        let proto = (await direct(path, PROTOBUF)).body;
        if (!precondition) proto = protobufWithResourceVersion(proto, "") ?? proto;
        body = change ? withProtobufLabel(proto, "changed", "yes") : proto;
      }
      const answer = await asOperator("PUT", path, {
        body,
        contentType: encoding === "json" ? JSON_TYPE : PROTOBUF,
        accept: encoding === "json" ? JSON_TYPE : PROTOBUF,
      });
      expect(answer.status).toBe(200);
      return { entry: lastWrite(), before, after: await live(path) };
    }

    it("no-op", async () => {
      const { entry, before, after } = await put(false);
      expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
      expect(entry).toMatchObject({
        verb: "update",
        effect: "no-op",
        resourceVersion: before.metadata?.resourceVersion,
      });
      expect(entry.sentResourceVersion !== undefined).toBe(precondition);
      expect(entry.proxyPrecondition !== undefined).toBe(!precondition);
    });

    it("changed, naming the fields it changed (read from the stored object before and after)", async () => {
      const { entry, before, after } = await put(true);
      expect(after.metadata?.resourceVersion).not.toBe(before.metadata?.resourceVersion);
      expect(entry).toMatchObject({ effect: "changed", resourceVersion: after.metadata?.resourceVersion });
      // A protobuf answer is not read as JSON: the state after it comes from an exact list at its resourceVersion.
      expect(entry.changedPaths).toEqual(encoding === "json" ? ["data.a"] : ["metadata.labels.changed"]);
    });
  });

  describe.each<{ type: PatchType; change: unknown; same: (object: KubeObject) => unknown }>([
    { type: "merge", change: { data: { a: "2" } }, same: () => ({ data: { a: "1" } }) },
    { type: "strategic", change: { data: { a: "2" } }, same: () => ({ data: { a: "1" } }) },
    {
      type: "json",
      change: [{ op: "replace", path: "/data/a", value: "2" }],
      same: () => [{ op: "replace", path: "/data/a", value: "1" }],
    },
    {
      type: "apply",
      change: { apiVersion: "v1", kind: "ConfigMap", data: { a: "2" } },
      same: () => ({ apiVersion: "v1", kind: "ConfigMap", data: { a: "1" } }),
    },
  ])("patch, $type", ({ type, change, same }) => {
    async function patch(body: unknown, name: string) {
      const query = type === "apply" ? "?fieldManager=test-operator&force=true" : "";
      const named =
        type === "apply" ? { ...(body as object), metadata: { name, namespace } } : (body as object);
      return asOperator("PATCH", `${configMap(name)}${query}`, {
        body: named,
        contentType: PATCH_CONTENT_TYPES[type],
      });
    }

    it("no-op", async () => {
      const before = await freshConfigMap();
      const name = before.metadata?.name ?? "";
      expect((await patch(same(before), name)).status).toBe(200);
      const entry = lastWrite();
      const after = await live(configMap(name));
      // An apply by a new manager records its ownership of fields: the server stores that, so it is a change.
      if (type === "apply") {
        expect(entry.effect).toBe(
          after.metadata?.resourceVersion === before.metadata?.resourceVersion ? "no-op" : "changed",
        );
        expect((await patch(same(before), name)).status).toBe(200);
        expect(lastWrite()).toMatchObject({ effect: "no-op", fieldManager: "test-operator" });
        return;
      }
      expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
      expect(entry).toMatchObject({ verb: "patch", patchType: type, effect: "no-op" });
      expect(entry.proxyPrecondition?.resourceVersion).toBe(before.metadata?.resourceVersion);
    });

    it("changed", async () => {
      const before = await freshConfigMap();
      const name = before.metadata?.name ?? "";
      expect((await patch(change, name)).status).toBe(200);
      const after = await live(configMap(name));
      expect(after.data).toEqual({ a: "2" });
      expect(lastWrite()).toMatchObject({
        effect: "changed",
        resourceVersion: after.metadata?.resourceVersion,
        changedPaths: ["data.a"],
      });
    });
  });

  it("server-side apply that creates the object: created", async () => {
    const name = `applied-${randomBytes(3).toString("hex")}`;
    const answer = await asOperator("PATCH", `${configMap(name)}?fieldManager=test-operator`, {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { a: "1" } },
      contentType: PATCH_CONTENT_TYPES.apply,
    });
    expect(answer.status).toBe(201);
    const live1 = await live(configMap(name));
    expect(lastWrite()).toMatchObject({
      verb: "patch",
      patchType: "apply",
      effect: "created",
      uid: live1.metadata?.uid,
    });
  });

  it("server-side apply sent as YAML reaches the server as written (YAML 1.1: replicas 010 is 8)", async () => {
    const name = `yaml-${randomBytes(3).toString("hex")}`;
    const manifest = (replicas: string) =>
      Buffer.from(
        [
          "apiVersion: apps/v1",
          "kind: Deployment",
          "metadata:",
          `  name: ${name}`,
          `  namespace: ${namespace}`,
          "spec:",
          `  replicas: ${replicas}`,
          "  selector: {matchLabels: {app: web}}",
          "  template:",
          "    metadata: {labels: {app: web}}",
          "    spec: {containers: [{name: c, image: 'x:1'}]}",
          "",
        ].join("\n"),
      );
    const path = `/apis/apps/v1/namespaces/${namespace}/deployments/${name}?fieldManager=test-operator`;
    const apply = (replicas: string) =>
      asOperator("PATCH", path, { body: manifest(replicas), contentType: PATCH_CONTENT_TYPES.apply });
    expect((await apply("1")).status).toBe(201);
    expect((await apply("010")).status).toBe(200);
    const stored = await live(`/apis/apps/v1/namespaces/${namespace}/deployments/${name}`);
    expect((stored.spec as { replicas: number }).replicas).toBe(8);
    // The proxy did not re-encode it (no precondition of its own): judged from the state it read.
    expect(lastWrite().proxyPrecondition).toBeUndefined();
    expect(lastWrite().effect).toBe("ambiguous");
  });

  it("status of a custom resource: no-op and changed", async () => {
    const name = `app-${randomBytes(3).toString("hex")}`;
    const app = await cluster.client.create({
      apiVersion: WEBAPP_API_VERSION,
      kind: "WebApp",
      metadata: { name, namespace },
      spec: { image: "x:1", replicas: 1, port: 8080 },
    });
    const path = `/apis/${WEBAPP_API_VERSION}/namespaces/${namespace}/webapps/${name}/status`;
    const status = { observedGeneration: 1, conditions: [] };
    const write = (object: KubeObject) => asOperator("PUT", path, { body: object });
    expect((await write({ ...app, status })).status).toBe(200);
    expect(lastWrite()).toMatchObject({
      subresource: "status",
      effect: "changed",
      // (`conditions: []` where there was none: a list that appeared counts as the list.)
      changedPaths: ["status.conditions", "status.observedGeneration"],
    });
    const current = await live(path.replace(/\/status$/, ""));
    expect((await write(current)).status).toBe(200);
    expect(lastWrite()).toMatchObject({ subresource: "status", effect: "no-op" });
    // A custom resource refuses an update without a resourceVersion (422): through the proxy too,
    // which must not add a precondition that would make it succeed.
    const { resourceVersion: _rv, ...unconditional } = current.metadata ?? {};
    const refused = await write({ ...current, metadata: unconditional, status: { observedGeneration: 2 } });
    expect(refused.status).toBe(422);
    expect(lastWrite()).toMatchObject({ subresource: "status", effect: "rejected", code: 422 });
    expect(lastWrite().proxyPrecondition).toBeUndefined();
    expect((await live(path.replace(/\/status$/, ""))).status).toEqual(status);
    const spec = await asOperator("PUT", path.replace(/\/status$/, ""), {
      body: { ...current, metadata: unconditional, spec: { image: "x:2", replicas: 1, port: 8080 } },
    });
    expect(spec.status).toBe(422);
  });

  it("status of a built-in kind (a Service, protobuf): no-op and changed", async () => {
    const name = `svc-${randomBytes(3).toString("hex")}`;
    await cluster.client.create({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace },
      // Status of a LoadBalancer Service is what its (here absent) controller writes.
      spec: { type: "LoadBalancer", ports: [{ port: 80 }] },
    });
    const path = `/api/v1/namespaces/${namespace}/services/${name}`;
    const proto = (await direct(path, PROTOBUF)).body;
    expect(
      (await asOperator("PUT", `${path}/status`, { body: proto, contentType: PROTOBUF, accept: PROTOBUF }))
        .status,
    ).toBe(200);
    expect(lastWrite()).toMatchObject({ subresource: "status", effect: "no-op" });
    const current = await live(path);
    const changed = { ...current, status: { loadBalancer: { ingress: [{ ip: "192.0.2.10" }] } } };
    expect((await asOperator("PUT", `${path}/status`, { body: changed })).status).toBe(200);
    expect(lastWrite()).toMatchObject({
      subresource: "status",
      effect: "changed",
      changedPaths: ["status.loadBalancer.ingress"],
    });
  });

  it("a /scale write: changed, its changed fields read from the object itself, not from the Scale it answers with", async () => {
    const name = `scaled-${randomBytes(3).toString("hex")}`;
    const labels = { app: name };
    await cluster.client.create({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, namespace },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: "app", image: "x:1" }] } },
      },
    });
    const answer = await asOperator(
      "PATCH",
      `/apis/apps/v1/namespaces/${namespace}/deployments/${name}/scale`,
      {
        body: { spec: { replicas: 3 } },
        contentType: PATCH_CONTENT_TYPES.merge,
      },
    );
    expect(answer.status).toBe(200);
    expect((JSON.parse(answer.body.toString()) as { kind?: string }).kind).toBe("Scale");
    expect(lastWrite()).toMatchObject({
      subresource: "scale",
      effect: "changed",
      changedPaths: ["spec.replicas"],
    });
  });

  it("delete: deleted; a delete of an object already terminating: no-op", async () => {
    const plain = await freshConfigMap();
    expect((await asOperator("DELETE", configMap(plain.metadata?.name ?? ""))).status).toBe(200);
    expect(lastWrite()).toMatchObject({ verb: "delete", effect: "deleted", uid: plain.metadata?.uid });

    const held = await cluster.client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: `held-${randomBytes(3).toString("hex")}`,
        namespace,
        finalizers: ["example.com/hold"],
      },
    });
    const path = configMap(held.metadata?.name ?? "");
    expect((await asOperator("DELETE", path)).status).toBe(200);
    expect(lastWrite()).toMatchObject({ effect: "deleted" });
    expect((await asOperator("DELETE", path)).status).toBe(200);
    expect(lastWrite()).toMatchObject({ effect: "no-op", effectWhy: "already terminating" });
    await cluster.client.patch(
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: held.metadata?.name ?? "", namespace, finalizers: null },
      } as unknown as KubeObject,
      { type: "merge" },
    );
    expect((await asOperator("DELETE", path)).status).toBe(404);
    expect(lastWrite()).toMatchObject({ effect: "rejected", reason: "NotFound" });
  });

  it("dry-run writes never have an effect", async () => {
    const existing = await freshConfigMap();
    const name = existing.metadata?.name ?? "";
    expect(
      (
        await asOperator("PATCH", `${configMap(name)}?dryRun=All`, {
          body: { data: { a: "9" } },
          contentType: PATCH_CONTENT_TYPES.merge,
        })
      ).status,
    ).toBe(200);
    expect(lastWrite()).toMatchObject({ dryRun: true, effect: "no-op" });
    expect((await live(configMap(name))).data).toEqual({ a: "1" });
    expect(
      (
        await asOperator("POST", `${configMaps()}?dryRun=All`, {
          body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "dry", namespace } },
        })
      ).status,
    ).toBe(201);
    expect(lastWrite()).toMatchObject({ dryRun: true, effect: "no-op" });
  });

  it("creates that store nothing: reviews and token requests are no-ops tagged review", async () => {
    const review = await asOperator("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SelfSubjectAccessReview",
        spec: { resourceAttributes: { verb: "get", resource: "configmaps", namespace } },
      },
    });
    expect(review.status).toBe(201);
    expect(lastWrite()).toMatchObject({ effect: "no-op", tag: "review" });
    const token = await asOperator("POST", `/api/v1/namespaces/${namespace}/serviceaccounts/default/token`, {
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds: 600 },
      },
    });
    expect(token.status).toBe(201);
    expect(lastWrite()).toMatchObject({ subresource: "token", effect: "no-op", tag: "review" });
  });

  it("another writer between the proxy's read and the operator's unconditional write is never blamed on the operator", async () => {
    const target = await freshConfigMap();
    const name = target.metadata?.name ?? "";
    // A foreign writer changes the object as fast as it can while the operator applies the same content.
    let foreign = true;
    let foreignWrites = 0;
    const writer = (async () => {
      while (foreign) {
        await cluster.client.patch(
          {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name, namespace, labels: { tick: String(foreignWrites++) } },
          },
          { type: "merge" },
        );
      }
    })();
    const applies: WriteEntry[] = [];
    try {
      for (let i = 0; i < 300 && !applies.some((e) => (e.proxyPrecondition?.attempts ?? 1) > 1); i++) {
        const answer = await asOperator("PATCH", `${configMap(name)}?fieldManager=test-operator&force=true`, {
          body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { a: "1" } },
          contentType: PATCH_CONTENT_TYPES.apply,
        });
        expect(answer.status).toBe(200);
        applies.push(lastWrite());
      }
    } finally {
      foreign = false;
      await writer;
    }
    expect(foreignWrites).toBeGreaterThan(0);
    // The race happened: a foreign write landed between the proxy's read and the forwarded write at least once.
    expect(applies.some((e) => (e.proxyPrecondition?.attempts ?? 1) > 1)).toBe(true);
    // The first apply took ownership of data.a (a real change); every later one changed nothing:
    // no-op, or, where the foreign writer won every attempt and the proxy sent the apply as it came
    // (no precondition of its own), ambiguous. Never changed.
    for (const apply of applies.slice(1)) {
      expect(apply.effect).toBe(apply.proxyPrecondition ? "no-op" : "ambiguous");
    }
  });
});
