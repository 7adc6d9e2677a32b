import { X509Certificate, createPrivateKey } from "node:crypto";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { createProxyCertificate } from "../../../src/proxy/proxy-certificate.js";

describe("createProxyCertificate", () => {
  it("is a self-signed X.509 v3 certificate for 127.0.0.1 that verifies with its own key", () => {
    const now = new Date("2026-11-29T12:00:00Z");
    const { cert, key } = createProxyCertificate({ now, days: 2 });
    const x509 = new X509Certificate(cert);
    expect(x509.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(x509.checkIP("10.0.0.1")).toBeUndefined();
    expect(x509.subjectAltName).toBe("IP Address:127.0.0.1");
    expect(x509.ca).toBe(true);
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(x509.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(new Date(x509.validFrom).getTime()).toBe(now.getTime() - 3_600_000);
    expect(new Date(x509.validTo).getTime()).toBe(now.getTime() + 2 * 86_400_000);
    expect(x509.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]);
  });

  it("makes a new key and serial every time", () => {
    const a = new X509Certificate(createProxyCertificate().cert);
    const b = new X509Certificate(createProxyCertificate().cert);
    expect(a.serialNumber).not.toBe(b.serialNumber);
    expect(a.fingerprint256).not.toBe(b.fingerprint256);
  });

  it("serves TLS that a client trusting only it accepts, and one trusting the system roots refuses", async () => {
    const identity = createProxyCertificate();
    const server = https.createServer(identity, (_req, res) => res.end("ok"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const get = (ca?: string) =>
      new Promise<string>((resolve, reject) => {
        https
          .get(url, { ca }, (res) => {
            res.setEncoding("utf8");
            let body = "";
            res.on("data", (c: string) => (body += c));
            res.on("end", () => resolve(body));
          })
          .on("error", reject);
      });
    try {
      expect(await get(identity.cert)).toBe("ok");
      await expect(get(undefined)).rejects.toThrow(/self-signed|self signed/);
    } finally {
      server.close();
    }
  });
});
