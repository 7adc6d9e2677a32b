import { describe, expect, it } from "vitest";
import {
  conversionToOperator,
  scenarioConfigurationName,
  scenarioWebhookConfiguration,
  SCENARIO_LABEL,
  webhookNames,
} from "../../../src/webhooks/webhook-configurations.js";
import { dryRunUnsupported, webhookRefusal } from "../../../src/webhooks/webhook-refusals.js";
import { ApiError } from "../../../src/kube/api-errors.js";

const endpoint = { port: 24443, caBundle: "Q0E=" };

/** As controller-gen writes it (kubebuilder's config/webhook/manifests.yaml). */
const MUTATING = {
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "MutatingWebhookConfiguration",
  metadata: {
    name: "mutating-webhook-configuration",
    annotations: { "cert-manager.io/inject-ca-from": "system/serving-cert", keep: "me" },
  },
  webhooks: [
    {
      name: "mmemcached-v1alpha1.kb.io",
      admissionReviewVersions: ["v1"],
      clientConfig: {
        service: { name: "webhook-service", namespace: "system", path: "/mutate-cache-v1alpha1-memcached" },
      },
      failurePolicy: "Fail",
      rules: [
        {
          apiGroups: ["cache.example.com"],
          apiVersions: ["v1alpha1"],
          operations: ["CREATE", "UPDATE"],
          resources: ["memcacheds"],
        },
      ],
      sideEffects: "None",
    },
    {
      name: "by-url.example.com",
      clientConfig: { url: "https://webhooks.example.com:8443/validate?strict=1", caBundle: "b2xk" },
      namespaceSelector: {
        matchLabels: { team: "a" },
        matchExpressions: [{ key: "tier", operator: "Exists" }],
      },
    },
  ],
};

describe("scenarioWebhookConfiguration", () => {
  const copy = scenarioWebhookConfiguration(MUTATING, "rc-drift-1a2b3c", endpoint);
  const [first, second] = (copy.webhooks as Record<string, unknown>[] | undefined) ?? [];

  it("is the scenario's own copy: named for the namespace, labelled, without cert-manager's injection", () => {
    expect(copy.metadata).toEqual({
      name: "rc-drift-1a2b3c-mutating-webhook-configuration",
      labels: { [SCENARIO_LABEL]: "rc-drift-1a2b3c" },
      annotations: { keep: "me" },
    });
    expect(copy.kind).toBe("MutatingWebhookConfiguration");
  });

  it("calls the operator process at 127.0.0.1 on the Service's path (or the URL's), trusting the kit's CA", () => {
    expect(first?.clientConfig).toEqual({
      url: "https://127.0.0.1:24443/mutate-cache-v1alpha1-memcached",
      caBundle: "Q0E=",
    });
    expect(second?.clientConfig).toEqual({
      url: "https://127.0.0.1:24443/validate?strict=1",
      caBundle: "Q0E=",
    });
  });

  it("keeps every other field of each webhook", () => {
    expect(first).toMatchObject({
      failurePolicy: "Fail",
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
    });
    expect(first?.rules).toEqual(MUTATING.webhooks[0]?.rules);
  });

  it("limits each webhook to the scenario's namespace, on top of its own selector", () => {
    const only = { key: "kubernetes.io/metadata.name", operator: "In", values: ["rc-drift-1a2b3c"] };
    expect(first?.namespaceSelector).toEqual({ matchExpressions: [only] });
    expect(second?.namespaceSelector).toEqual({
      matchLabels: { team: "a" },
      matchExpressions: [{ key: "tier", operator: "Exists" }, only],
    });
  });

  it("names at most 253 characters, never ending in a dash", () => {
    expect(scenarioConfigurationName("x".repeat(300), "rc-a").length).toBe(253);
    expect(scenarioConfigurationName(`${"y".repeat(247)}-z`, "rc-a")).toBe(`rc-a-${"y".repeat(247)}`);
  });

  it("lists the webhooks for messages", () => {
    expect(webhookNames(MUTATING).map((w) => w.webhook)).toEqual([
      "mmemcached-v1alpha1.kb.io",
      "by-url.example.com",
    ]);
  });
});

describe("conversionToOperator", () => {
  const crd = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "memcacheds.cache.example.com" },
    spec: { group: "cache.example.com", versions: [{ name: "v1" }, { name: "v2" }] },
  };

  it("sends a CRD's conversions to /convert on the operator's port, with review version v1 by default", () => {
    expect(conversionToOperator(crd, endpoint).spec).toEqual({
      ...crd.spec,
      conversion: {
        strategy: "Webhook",
        webhook: {
          conversionReviewVersions: ["v1"],
          clientConfig: { url: "https://127.0.0.1:24443/convert", caBundle: "Q0E=" },
        },
      },
    });
  });

  it("keeps the path and review versions a CRD's conversion webhook already named", () => {
    const patched = {
      ...crd,
      spec: {
        ...crd.spec,
        conversion: {
          strategy: "Webhook",
          webhook: {
            conversionReviewVersions: ["v1", "v1beta1"],
            clientConfig: { service: { name: "webhook-service", namespace: "system", path: "/convert-it" } },
          },
        },
      },
    };
    expect(conversionToOperator(patched, endpoint).spec).toMatchObject({
      conversion: {
        webhook: {
          conversionReviewVersions: ["v1", "v1beta1"],
          clientConfig: { url: "https://127.0.0.1:24443/convert-it", caBundle: "Q0E=" },
        },
      },
    });
  });
});

describe("webhookRefusal", () => {
  const status = (message: string) =>
    new ApiError(
      400,
      "BadRequest",
      `POST /apis: 400: ${message}`,
      JSON.stringify({ kind: "Status", message }),
    );

  it.each([
    [
      'admission webhook "vwebapp.kb.io" denied the request: spec.replicas: 500 is more than 50',
      "the admission webhook vwebapp.kb.io denied it: spec.replicas: 500 is more than 50",
    ],
    [
      'Internal error occurred: failed calling webhook "mwebapp.kb.io": failed to call webhook: Post "https://127.0.0.1:9443/mutate": dial tcp 127.0.0.1:9443: connect: connection refused',
      'the API server could not call the webhook mwebapp.kb.io: failed to call webhook: Post "https://127.0.0.1:9443/mutate": dial tcp 127.0.0.1:9443: connect: connection refused',
    ],
    ['admission webhook "x" denied the request', "the admission webhook x denied it: no reason given"],
  ])("says whose webhook stopped the write: %s", (message, expected) => {
    expect(webhookRefusal(status(message))).toBe(expected);
  });

  it("is undefined for any other refusal", () => {
    expect(
      webhookRefusal(status('WebApp.demo "hello" is invalid: spec.port: Invalid value: 0')),
    ).toBeUndefined();
    expect(webhookRefusal(new Error("socket hang up"))).toBeUndefined();
  });

  it("tells a webhook that takes no dry run (the update is then left to its write) from a refusal", () => {
    const unsupported = status('admission webhook "vwebapp.kb.io" does not support dry run');
    expect(dryRunUnsupported(unsupported)).toBe("vwebapp.kb.io");
    expect(webhookRefusal(unsupported)).toBeUndefined();
    expect(dryRunUnsupported(status('admission webhook "x" denied the request: no'))).toBeUndefined();
  });
});
