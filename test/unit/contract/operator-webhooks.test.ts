import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { loadContract } from "../../../src/contract/load-contract.js";
import { webhooksSerializeScenarios } from "../../../src/contract/operator-webhooks.js";
import { exampleCrd } from "../../support/crd-fixture.js";
import { exampleDir } from "../../support/webapp-example.js";

const CRD = exampleCrd({ plural: "widgets", singular: "widget", kind: "Widget" }, { type: "object" });
const SAMPLE = { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: { size: 1 } };
const VALIDATING = {
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingWebhookConfiguration",
  metadata: { name: "validating-webhook-configuration" },
  webhooks: [
    { name: "vwidget.kb.io", clientConfig: { service: { name: "s", namespace: "system", path: "/v" } } },
  ],
};

async function load(webhooks: unknown, files: Record<string, unknown> = {}) {
  const dir = await mkdtemp(join(tmpdir(), "rc-webhooks-"));
  const all = { "crd.yaml": CRD, "sample.yaml": SAMPLE, "manifests.yaml": VALIDATING, ...files };
  for (const [name, value] of Object.entries(all)) {
    await writeFile(join(dir, name), typeof value === "string" ? value : stringify(value));
  }
  const file = join(dir, "reconcile-conformance.yaml");
  await writeFile(
    file,
    stringify({ operator: { command: ["./manager"], webhooks }, crds: ["crd.yaml"], sample: "sample.yaml" }),
  );
  return loadContract(file);
}

async function loadError(webhooks: unknown, files?: Record<string, unknown>): Promise<string> {
  return load(webhooks, files).then(
    () => "loaded",
    (error: unknown) => (error as Error).message,
  );
}

describe("operator.webhooks", () => {
  it("reads the configurations and fills in controller-runtime's port and certificate directory", async () => {
    const contract = await load({ manifests: "manifests.yaml" });
    if (contract.operator.mode !== "process") throw new Error("expected a process operator");
    const webhooks = contract.operator.webhooks;
    expect(webhooks?.configurations.map((c) => c.object.metadata?.name)).toEqual([
      "validating-webhook-configuration",
    ]);
    expect(webhooks?.configurations[0]?.file).toBe(join(contract.file, "..", "manifests.yaml"));
    expect(webhooks?.port).toBe(9443);
    expect(webhooks?.portTelling).toBeUndefined();
    expect(webhooks?.certDir).toEqual({ underTmpdir: true });
    expect(webhooks?.conversion).toEqual([]);
    // One port for every scenario's operator: they cannot run side by side.
    expect(webhooksSerializeScenarios(webhooks)).toContain("port 9443");
  });

  it("resolves the ways of telling the operator its port and its certificate directory", async () => {
    const told = await load({
      manifests: ["manifests.yaml"],
      portArg: "--webhook-port",
      certDirEnv: "CERT_DIR",
    });
    if (told.operator.mode !== "process") throw new Error("expected a process operator");
    expect(told.operator.webhooks?.portTelling).toEqual({ arg: "--webhook-port" });
    expect(told.operator.webhooks?.certDir).toEqual({ env: "CERT_DIR" });
    expect(webhooksSerializeScenarios(told.operator.webhooks)).toBeUndefined();
    const fixed = await load({
      manifests: "manifests.yaml",
      portEnv: "PORT",
      certDir: "/etc/certs",
      port: 8443,
    });
    if (fixed.operator.mode !== "process") throw new Error("expected a process operator");
    expect(fixed.operator.webhooks).toMatchObject({
      port: 8443,
      portTelling: { env: "PORT" },
      certDir: { path: "/etc/certs" },
    });
  });

  it("takes conversion CRDs by name, and a CRD that already names a conversion webhook; they serialize the scenarios", async () => {
    const named = await load({ conversion: ["widgets.example.com"], portArg: "--webhook-port" });
    if (named.operator.mode !== "process") throw new Error("expected a process operator");
    expect(named.operator.webhooks?.conversion).toEqual(["widgets.example.com"]);
    expect(webhooksSerializeScenarios(named.operator.webhooks)).toContain("converts widgets.example.com");
    const converting = { ...CRD, spec: { ...CRD.spec, conversion: { strategy: "Webhook" } } };
    const found = await load({ manifests: "manifests.yaml" }, { "crd.yaml": converting });
    if (found.operator.mode !== "process") throw new Error("expected a process operator");
    expect(found.operator.webhooks?.conversion).toEqual(["widgets.example.com"]);
  });

  it("names each mistake with its field", async () => {
    expect(await loadError({})).toContain("operator.webhooks.manifests: expected the webhook configurations");
    expect(await loadError({ manifests: "manifests.yaml", portArg: "--p", portEnv: "P" })).toContain(
      "operator.webhooks.portEnv: expected at most one of portArg and portEnv",
    );
    expect(await loadError({ manifests: "manifests.yaml", certDir: "/c", certDirArg: "--c" })).toContain(
      "expected at most one of certDir, certDirArg and certDirEnv (got certDir, certDirArg)",
    );
    expect(await loadError({ manifests: "manifests.yaml", certDir: "relative/dir" })).toContain(
      "operator.webhooks.certDir: expected an absolute directory",
    );
    expect(await loadError({ manifests: "manifests.yaml", port: 70000 })).toContain(
      "operator.webhooks.port: expected a port number",
    );
    expect(await loadError({ manifests: "sample.yaml" })).toContain(
      "operator.webhooks.manifests[0]: sample.yaml holds Widget w: expected only MutatingWebhookConfiguration and ValidatingWebhookConfiguration objects",
    );
    expect(await loadError({ manifests: "missing.yaml" })).toContain(
      "operator.webhooks.manifests[0]: cannot read",
    );
    expect(await loadError({ conversion: ["gadgets.example.com"] })).toContain(
      'operator.webhooks.conversion[0]: no CRD of crds is named "gadgets.example.com" (crds: widgets.example.com)',
    );
  });

  it("is refused beside deploy: a deployed operator's webhooks are its manifests' business", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rc-webhooks-"));
    await writeFile(join(dir, "crd.yaml"), stringify(CRD));
    await writeFile(join(dir, "sample.yaml"), stringify(SAMPLE));
    const file = join(dir, "c.yaml");
    await writeFile(
      file,
      stringify({
        operator: {
          deploy: { image: "example.com/op:ci", manifests: "config/default" },
          webhooks: { manifests: "m.yaml" },
        },
        crds: ["crd.yaml"],
        sample: "sample.yaml",
      }),
    );
    await expect(loadContract(file)).rejects.toThrow("operator.webhooks: only for command");
  });

  it("loads the example operator's webhook contract", async () => {
    const contract = await loadContract(join(exampleDir, "reconcile-conformance.webhooks.yaml"));
    if (contract.operator.mode !== "process") throw new Error("expected a process operator");
    expect(contract.operator.webhooks?.configurations.map((c) => c.object.kind)).toEqual([
      "MutatingWebhookConfiguration",
      "ValidatingWebhookConfiguration",
    ]);
    expect(contract.operator.webhooks?.portTelling).toEqual({ arg: "--webhook-port" });
    expect(contract.operator.webhooks?.certDir).toEqual({ arg: "--webhook-cert-path" });
  });
});
