import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { isKitCredential, operatorEnvironment } from "../../../src/operator/operator-environment.js";
import {
  proxyKubeconfig,
  removeProxyToken,
  REMOVED_TOKEN,
  writeProxyKubeconfig,
} from "../../../src/proxy/operator-kubeconfig.js";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { redactSecretBody, secretHash } from "../../../src/proxy/secret-redaction.js";
import { stringify } from "yaml";

describe("redactSecretBody", () => {
  const secrets = { group: "", resource: "secrets" };

  it("replaces every data and stringData value of a Secret by a short hash of it", () => {
    const out = redactSecretBody(secrets, {
      kind: "Secret",
      metadata: { name: "s" },
      data: { password: "aHVudGVyMg==" },
      stringData: { token: "t0k3n" },
    });
    expect(out).toEqual({
      kind: "Secret",
      metadata: { name: "s" },
      data: { password: secretHash("aHVudGVyMg==") },
      stringData: { token: secretHash("t0k3n") },
    });
    expect(JSON.stringify(out)).not.toContain("aHVudGVyMg==");
    expect(JSON.stringify(out)).not.toContain("t0k3n");
    expect(secretHash("a")).toMatch(/^hmac:[0-9a-f]{12}$/);
    expect(secretHash("a")).toBe(secretHash("a"));
    expect(secretHash("a")).not.toBe(secretHash("b"));
  });

  it("hashes values in JSON patches of Secrets", () => {
    const out = redactSecretBody(secrets, [
      { op: "replace", path: "/data/password", value: "c2VjcmV0" },
      { op: "add", path: "/data", value: { k: "c2VjcmV0" } },
      { op: "replace", path: "/metadata/labels/a", value: "visible" },
    ]);
    expect(JSON.stringify(out)).not.toContain("c2VjcmV0");
    expect(JSON.stringify(out)).toContain("visible");
  });

  it("hashes kubectl's last-applied-configuration of a Secret, which holds every value", () => {
    const lastApplied = JSON.stringify({ kind: "Secret", stringData: { password: "in-the-annotation" } });
    const body = {
      kind: "Secret",
      metadata: {
        name: "s",
        annotations: { "kubectl.kubernetes.io/last-applied-configuration": lastApplied, keep: "me" },
      },
    };
    const out = JSON.stringify(redactSecretBody(secrets, body));
    expect(out).not.toContain("in-the-annotation");
    expect(out).toContain('"keep":"me"');
    const patched = JSON.stringify(
      redactSecretBody(secrets, [
        {
          op: "add",
          path: "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration",
          value: lastApplied,
        },
        {
          op: "replace",
          path: "/metadata/annotations",
          value: { "kubectl.kubernetes.io/last-applied-configuration": lastApplied },
        },
        {
          op: "replace",
          path: "/metadata",
          value: { annotations: { "kubectl.kubernetes.io/last-applied-configuration": lastApplied } },
        },
        { op: "replace", path: "", value: body },
      ]),
    );
    expect(patched).not.toContain("in-the-annotation");
  });

  it("leaves other kinds alone", () => {
    const configMap = { data: { password: "plain" } };
    expect(redactSecretBody({ group: "", resource: "configmaps" }, configMap)).toBe(configMap);
  });
});

describe("operatorEnvironment", () => {
  const parent = {
    HOME: "/home/u",
    PATH: "/bin",
    GITHUB_TOKEN: "ghs_secret",
    ACTIONS_RUNTIME_TOKEN: "rt",
    ACTIONS_ID_TOKEN_REQUEST_URL: "u",
    INPUT_CONFIG: "x",
    GITHUB_REPOSITORY: "o/r",
    KUBECONFIG: "/home/u/.kube/config",
  };

  it("withholds the kit's CI credentials, adds the contract's variables, and points KUBECONFIG at the proxy", () => {
    const env = operatorEnvironment({
      parent,
      extra: { LOG_LEVEL: "debug", PATH: "/opt/bin" },
      kubeconfigPath: "/w/op.kubeconfig",
    });
    expect(env).toEqual({
      HOME: "/home/u",
      PATH: "/opt/bin",
      GITHUB_REPOSITORY: "o/r",
      LOG_LEVEL: "debug",
      KUBECONFIG: "/w/op.kubeconfig",
    });
  });

  it("passes a withheld variable only when the contract names it", () => {
    const env = operatorEnvironment({ parent, passThrough: ["GITHUB_TOKEN"], kubeconfigPath: "/k" });
    expect(env.GITHUB_TOKEN).toBe("ghs_secret");
    expect(env.ACTIONS_RUNTIME_TOKEN).toBeUndefined();
    expect(
      operatorEnvironment({ parent, extra: { KUBECONFIG: "/mine" }, kubeconfigPath: "/k" }).KUBECONFIG,
    ).toBe("/k");
  });

  it.each([
    ["ACTIONS_RUNTIME_TOKEN", true],
    ["INPUT_FAIL-ON-VIOLATION", true],
    ["GITHUB_TOKEN", true],
    ["GITHUB_SHA", false],
    ["MY_ACTIONS_X", false],
  ])("%s is a kit credential: %s", (name, expected) => {
    expect(isKitCredential(name)).toBe(expected);
  });
});

describe("proxyKubeconfig", () => {
  it("is a kubeconfig with the proxy's address, its CA and the token, serialised by the YAML library", () => {
    const ca = "-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n";
    const text = stringify(
      proxyKubeconfig({
        server: "https://127.0.0.1:4321",
        certificateAuthority: ca,
        token: "t: with: colons",
        user: "operator",
        namespace: "ns",
      }),
    );
    expect(parse(text)).toEqual({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: "reconcile-conformance-proxy",
          cluster: {
            server: "https://127.0.0.1:4321",
            "certificate-authority-data": Buffer.from(ca).toString("base64"),
          },
        },
      ],
      users: [{ name: "operator", user: { token: "t: with: colons" } }],
      contexts: [
        {
          name: "reconcile-conformance-proxy",
          context: { cluster: "reconcile-conformance-proxy", user: "operator", namespace: "ns" },
        },
      ],
      "current-context": "reconcile-conformance-proxy",
    });
  });
});

describe("removeProxyToken", () => {
  it("takes the token out of a written proxy kubeconfig and keeps the address and CA; leaves other files alone", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rc-token-"));
    const options = {
      server: "https://127.0.0.1:4321",
      certificateAuthority: "CA",
      token: "s3cr3t",
      user: "operator",
    };
    const path = await writeProxyKubeconfig(join(dir, "operator.kubeconfig"), options);
    await removeProxyToken(path);
    const text = await readFile(path, "utf8");
    expect(text).not.toContain("s3cr3t");
    expect(parse(text)).toEqual({
      ...proxyKubeconfig(options),
      users: [{ name: "operator", user: { token: REMOVED_TOKEN } }],
    });
    const other = join(dir, "notes.yaml");
    await writeFile(other, "- a list\n");
    await removeProxyToken(other);
    expect(await readFile(other, "utf8")).toBe("- a list\n");
    await removeProxyToken(join(dir, "gone")); // no file: nothing to do
  });
});
