import { describe, expect, it } from "vitest";
import { onSecret, registerSecret } from "../../../src/util/secrets.js";

describe("secrets", () => {
  it("tells a listener of every secret, those before it and those after, once each", () => {
    registerSecret("token-before-the-listener-0123");
    const seen: string[] = [];
    const stop = onSecret((s) => seen.push(s));
    registerSecret("token-after-the-listener-4567");
    registerSecret("token-after-the-listener-4567");
    registerSecret("short");
    registerSecret(undefined);
    stop();
    registerSecret("token-after-stop-89ab");
    expect(seen).toContain("token-before-the-listener-0123");
    expect(seen.filter((s) => s === "token-after-the-listener-4567")).toHaveLength(1);
    expect(seen).not.toContain("short");
    expect(seen).not.toContain("token-after-stop-89ab");
  });

  it("registers the lines of a base64 PEM key, as a log would show them decoded", () => {
    const body = "MIIEowIBAAKCAQEAx1234567890abcdefghijklmnopqrstuv";
    const pem = `-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----\n`;
    const encoded = Buffer.from(pem).toString("base64");
    const seen: string[] = [];
    const stop = onSecret((s) => seen.push(s));
    registerSecret(encoded);
    stop();
    expect(seen).toContain(encoded);
    expect(seen).toContain(body);
    expect(seen.some((s) => s.startsWith("-----"))).toBe(false);
  });
});
