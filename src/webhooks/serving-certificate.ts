import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createProxyCertificate } from "../proxy/proxy-certificate.js";

/**
 * The webhook server's TLS identity for one run: a self-signed certificate
 * for 127.0.0.1 that is also the CA bundle the webhook configurations
 * trust. The API server (on this machine: kwok's binary runtime) verifies
 * the operator's webhook server with it; nothing else trusts it.
 */
export interface WebhookCertificate {
  /** PEM certificate, written as tls.crt. */
  readonly cert: string;
  /** PEM PKCS#8 key, written as tls.key. */
  readonly key: string;
  /** base64 of the PEM certificate: clientConfig.caBundle. */
  readonly caBundle: string;
}

export function createWebhookCertificate(now?: Date): WebhookCertificate {
  const { cert, key } = createProxyCertificate({
    commonName: "reconcile-conformance webhook server",
    ...(now ? { now } : {}),
  });
  return { cert, key, caBundle: Buffer.from(cert).toString("base64") };
}

/** controller-runtime's certificate directory under a temporary directory (webhook.Options.CertDir's default). */
export function controllerRuntimeCertDir(tmpdir: string): string {
  return join(tmpdir, "k8s-webhook-server", "serving-certs");
}

/**
 * Writes tls.crt and tls.key into `dir` (controller-runtime's and
 * kubebuilder's file names). Each file is written beside and renamed into
 * place, so an operator that watches the directory (controller-runtime's
 * certwatcher) never reads half a file.
 */
export async function writeServingCertificate(dir: string, certificate: WebhookCertificate): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const [name, text, mode] of [
    ["tls.crt", certificate.cert, 0o644],
    ["tls.key", certificate.key, 0o600],
  ] as const) {
    const partial = join(dir, `.${name}.partial`);
    await writeFile(partial, text, { mode });
    await rename(partial, join(dir, name));
  }
}
