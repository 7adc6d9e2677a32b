import { X509Certificate } from "node:crypto";
import { mkdtemp, readFile, stat } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type Server } from "node:tls";
import { afterEach, describe, expect, it } from "vitest";
import {
  controllerRuntimeCertDir,
  createWebhookCertificate,
  writeServingCertificate,
} from "../../../src/webhooks/serving-certificate.js";
import { tlsAnswer } from "../../../src/webhooks/webhook-serving-operator.js";

describe("the webhook serving certificate", () => {
  it("is for 127.0.0.1, its own CA, and its caBundle is the base64 of its PEM", () => {
    const certificate = createWebhookCertificate();
    const x509 = new X509Certificate(certificate.cert);
    expect(x509.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(x509.subject).toContain("reconcile-conformance webhook server");
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(Buffer.from(certificate.caBundle, "base64").toString()).toBe(certificate.cert);
  });

  it("is written as controller-runtime reads it: tls.crt and tls.key, the key readable by its owner only", async () => {
    const dir = controllerRuntimeCertDir(await mkdtemp(join(tmpdir(), "rc-certs-")));
    expect(dir).toMatch(/\/k8s-webhook-server\/serving-certs$/);
    const certificate = createWebhookCertificate();
    await writeServingCertificate(dir, certificate);
    expect(await readFile(join(dir, "tls.crt"), "utf8")).toBe(certificate.cert);
    expect(await readFile(join(dir, "tls.key"), "utf8")).toBe(certificate.key);
    expect((await stat(join(dir, "tls.key"))).mode & 0o077).toBe(0);
    // A second run's certificate replaces the first.
    const next = createWebhookCertificate();
    await writeServingCertificate(dir, next);
    expect(await readFile(join(dir, "tls.crt"), "utf8")).toBe(next.cert);
  });
});

describe("tlsAnswer", () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  async function serve(certificate: { cert: string; key: string }): Promise<number> {
    const server = createServer({ cert: certificate.cert, key: certificate.key }, (socket) => socket.end());
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return (server.address() as AddressInfo).port;
  }

  it("answers when the server presents the kit's certificate", async () => {
    const certificate = createWebhookCertificate();
    expect(await tlsAnswer(await serve(certificate), certificate.cert)).toBe("answered");
  });

  it("says when the server presents a certificate the kit did not make", async () => {
    const port = await serve(createWebhookCertificate());
    expect(await tlsAnswer(port, createWebhookCertificate().cert)).toMatch(
      /^its certificate is not the kit's \(/,
    );
  });

  it("says when nothing listens", async () => {
    const port = await serve(createWebhookCertificate());
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
    expect(await tlsAnswer(port, createWebhookCertificate().cert)).toBe("nothing listens there");
  });
});
