import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { OperatorWebhooks } from "../../../src/contract/operator-webhooks.js";
import { UsageError } from "../../../src/errors.js";
import {
  crdsForServing,
  portTold,
  prepareWebhookServing,
  scenarioConfigurations,
} from "../../../src/webhooks/webhook-serving.js";

const webhooks = (settings: Partial<OperatorWebhooks> = {}): OperatorWebhooks => ({
  configurations: [
    {
      file: "/repo/config/webhook/manifests.yaml",
      object: {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingWebhookConfiguration",
        metadata: { name: "validating-webhook-configuration" },
        webhooks: [
          { name: "v.kb.io", clientConfig: { service: { name: "s", namespace: "system", path: "/v" } } },
        ],
      },
    },
  ],
  port: 9443,
  certDir: { underTmpdir: true },
  conversion: [],
  ...settings,
});

describe("prepareWebhookServing", () => {
  it("puts the certificate in controller-runtime's directory under a TMPDIR of the run, by default", async () => {
    const runDir = await mkdtemp(join(tmpdir(), "rc-serving-"));
    const serving = await prepareWebhookServing(webhooks(), runDir, "kwok");
    expect(serving.env).toEqual({ TMPDIR: join(runDir, "operator-tmp") });
    expect(serving.argv).toEqual([]);
    expect(serving.certDir).toBe(join(runDir, "operator-tmp/k8s-webhook-server/serving-certs"));
    expect(await readFile(join(serving.certDir, "tls.crt"), "utf8")).toBe(serving.certificate.cert);
  });

  it("names the directory to the operator by flag or variable, or writes to the fixed one", async () => {
    const runDir = await mkdtemp(join(tmpdir(), "rc-serving-"));
    const byFlag = await prepareWebhookServing(
      webhooks({ certDir: { arg: "--webhook-cert-path" } }),
      runDir,
      "kwok",
    );
    expect(byFlag.argv).toEqual([`--webhook-cert-path=${join(runDir, "serving-certs")}`]);
    expect(byFlag.env).toEqual({});
    const byEnv = await prepareWebhookServing(webhooks({ certDir: { env: "CERTS" } }), runDir, "existing");
    expect(byEnv.env).toEqual({ CERTS: join(runDir, "serving-certs") });
    const fixed = join(runDir, "fixed");
    const atPath = await prepareWebhookServing(webhooks({ certDir: { path: fixed } }), runDir, "kwok");
    expect([atPath.certDir, atPath.argv, atPath.env]).toEqual([fixed, [], {}]);
    expect(await readFile(join(fixed, "tls.key"), "utf8")).toBe(atPath.certificate.key);
  });

  it("is refused on kind, whose API server cannot reach 127.0.0.1 of this machine, saying what to do", async () => {
    const runDir = await mkdtemp(join(tmpdir(), "rc-serving-"));
    const refused = await prepareWebhookServing(webhooks(), runDir, "kind").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UsageError);
    expect((refused as Error).message).toContain("run with --cluster kwok, or deploy the operator");
  });

  it("tells the port only when the contract says how, and copies configurations calling it", async () => {
    expect(portTold(webhooks(), 9443)).toEqual({ argv: [], env: {} });
    expect(portTold(webhooks({ portTelling: { arg: "--webhook-port" } }), 24001).argv).toEqual([
      "--webhook-port=24001",
    ]);
    expect(portTold(webhooks({ portTelling: { env: "PORT" } }), 24001).env).toEqual({ PORT: "24001" });
    const serving = await prepareWebhookServing(
      webhooks(),
      await mkdtemp(join(tmpdir(), "rc-serving-")),
      "kwok",
    );
    const [copy] = scenarioConfigurations(serving, "rc-a-1", 24001);
    expect(copy?.metadata?.name).toBe("rc-a-1-validating-webhook-configuration");
    expect(JSON.stringify(copy)).toContain('"url":"https://127.0.0.1:24001/v"');
  });

  it("sends only the conversion CRDs to the operator, on the contract's port", async () => {
    const crd = (name: string) => ({
      object: {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name },
        spec: {},
      },
    });
    const serving = await prepareWebhookServing(
      webhooks({ conversion: ["a.example.com"], port: 8443 }),
      await mkdtemp(join(tmpdir(), "rc-serving-")),
      "kwok",
    );
    const [a, b] = crdsForServing([crd("a.example.com"), crd("b.example.com")], serving);
    expect(JSON.stringify(a?.spec)).toContain('"url":"https://127.0.0.1:8443/convert"');
    expect(b?.spec).toEqual({});
    expect(crdsForServing([crd("a.example.com")], undefined)[0]?.spec).toEqual({});
  });
});
