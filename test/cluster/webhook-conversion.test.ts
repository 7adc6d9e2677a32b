import { mkdtemp } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OperatorWebhooks } from "../../src/contract/operator-webhooks.js";
import type { KubeObject } from "../../src/kube/kube-client.js";
import { pollUntil } from "../../src/util/poll.js";
import { crdsForServing, prepareWebhookServing } from "../../src/webhooks/webhook-serving.js";
import { createSettledNamespace, startTestCluster, type TestCluster } from "../support/kwok-cluster.js";

// A conversion webhook as the kit installs it, against a real kube-apiserver: a CRD with two
// versions, its conversion sent to https://127.0.0.1:<port>/convert with the kit's CA by
// crdsForServing, and a stand-in for the operator's webhook server (the operator's part: the
// ConversionReview answer) serving the kit's certificate. The API server must call it to read a
// v1 object as v2.

let cluster: TestCluster;
let server: Server;
let port: number;
const reviews: string[] = [];

const CRD: KubeObject = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "gadgets.convert.example.com" },
  spec: {
    group: "convert.example.com",
    scope: "Namespaced",
    names: { plural: "gadgets", singular: "gadget", kind: "Gadget", listKind: "GadgetList" },
    versions: ["v1", "v2"].map((name) => ({
      name,
      served: true,
      storage: name === "v1",
      schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
    })),
  },
};

/** v1 spec.size (a number) is v2 spec.sizeText (a string), and back. */
function convert(object: Record<string, unknown>, to: string): Record<string, unknown> {
  const spec = (object.spec ?? {}) as Record<string, unknown>;
  const converted =
    to === "convert.example.com/v2" ? { sizeText: String(spec.size) } : { size: Number(spec.sizeText) };
  return { ...object, apiVersion: to, spec: converted };
}

beforeAll(async () => {
  cluster = await startTestCluster("rc-conversion");
  const webhooks: OperatorWebhooks = {
    configurations: [],
    port: 0,
    certDir: { underTmpdir: true },
    conversion: ["gadgets.convert.example.com"],
  };
  const serving = await prepareWebhookServing(
    webhooks,
    await mkdtemp(join(tmpdir(), "rc-conv-")),
    "existing",
  );
  server = createServer(
    { cert: serving.certificate.cert, key: serving.certificate.key },
    (request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        reviews.push(request.url ?? "");
        const review = JSON.parse(body) as {
          request: { uid: string; desiredAPIVersion: string; objects: Record<string, unknown>[] };
        };
        response.setHeader("content-type", "application/json");
        response.end(
          JSON.stringify({
            apiVersion: "apiextensions.k8s.io/v1",
            kind: "ConversionReview",
            response: {
              uid: review.request.uid,
              result: { status: "Success" },
              convertedObjects: review.request.objects.map((o) =>
                convert(o, review.request.desiredAPIVersion),
              ),
            },
          }),
        );
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  const [patched] = crdsForServing([{ object: CRD }], { ...serving, webhooks: { ...webhooks, port } });
  if (!patched) throw new Error("crdsForServing returned no CRD");
  await cluster.client.create(patched);
  await pollUntil(
    async () => {
      await cluster.client.list("convert.example.com/v2", "Gadget");
      return { done: true, value: undefined };
    },
    { description: "Gadget v2 to be served", timeoutMs: 30_000 },
  );
});

afterAll(async () => {
  // The API server keeps its connections alive: close them, or close() waits for their timeout.
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  cluster?.client.close();
  await cluster?.provider.delete();
});

describe("a conversion webhook pointed at the operator process", () => {
  it("is called by the API server with the kit's CA, and its answer is what v2 reads", async () => {
    await createSettledNamespace(cluster.client, "conversion");
    await cluster.client.create({
      apiVersion: "convert.example.com/v1",
      kind: "Gadget",
      metadata: { name: "g", namespace: "conversion" },
      spec: { size: 3 },
    });
    const asV2 = await cluster.client.get({
      apiVersion: "convert.example.com/v2",
      kind: "Gadget",
      name: "g",
      namespace: "conversion",
    });
    expect(asV2.spec).toEqual({ sizeText: "3" });
    expect(reviews.some((url) => url.startsWith("/convert?"))).toBe(true);
    const stored = await cluster.client.get({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      name: CRD.metadata?.name ?? "",
    });
    expect(JSON.stringify(stored.spec)).toContain(`"url":"https://127.0.0.1:${port}/convert"`);
  });
});
