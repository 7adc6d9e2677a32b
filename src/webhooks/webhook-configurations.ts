import type { KubeObject } from "../kube/kube-client.js";
import { asRecord, isRecord } from "../util/records.js";

/**
 * The operator's webhook configurations as one scenario installs them, and
 * its CRDs with their conversion pointed at the operator process. Pure: the
 * manifests in, the objects to create out.
 *
 * In the cluster a webhook is reached through a Service; here the operator
 * is a process on this machine, so each webhook's clientConfig becomes
 * `url: https://127.0.0.1:<port><the Service's path>` with the kit's CA as
 * `caBundle` (what envtest does for controller-runtime's tests). Each
 * scenario gets its own copy, limited to its namespace, so that scenarios
 * side by side call their own operator and no other.
 */

/** The label that says which scenario a copy belongs to. */
export const SCENARIO_LABEL = "reconcile-conformance.dev/scenario";

/** Where one scenario's webhooks are served, and with which CA. */
export interface WebhookEndpoint {
  readonly port: number;
  /** The CA bundle as the API expects it: base64 of the PEM certificate. */
  readonly caBundle: string;
}

/** One webhook of a configuration, for messages: "mwebapp.kb.io (MutatingWebhookConfiguration webapp-mutating)". */
export interface WebhookName {
  readonly webhook: string;
  readonly kind: string;
  readonly configuration: string;
}

/** The name a scenario's copy of configuration `name` gets: unique per namespace, at most 253 characters. */
export function scenarioConfigurationName(name: string, namespace: string): string {
  return `${namespace}-${name}`.slice(0, 253).replace(/[-.]+$/, "");
}

/** A scenario's copy of a Mutating- or ValidatingWebhookConfiguration. */
export function scenarioWebhookConfiguration(
  configuration: KubeObject,
  namespace: string,
  endpoint: WebhookEndpoint,
): KubeObject {
  const metadata = configuration.metadata ?? {};
  const webhooks = Array.isArray(configuration.webhooks) ? configuration.webhooks : [];
  return {
    apiVersion: configuration.apiVersion ?? "admissionregistration.k8s.io/v1",
    kind: configuration.kind ?? "",
    metadata: {
      name: scenarioConfigurationName(metadata.name ?? "webhooks", namespace),
      labels: { ...metadata.labels, [SCENARIO_LABEL]: namespace },
      // cert-manager's inject-ca-from and the like: the kit puts the CA in itself.
      ...(metadata.annotations ? { annotations: withoutCaInjection(metadata.annotations) } : {}),
    },
    webhooks: webhooks.map((webhook) => {
      const record = asRecord(webhook);
      return {
        ...record,
        clientConfig: localClientConfig(asRecord(record.clientConfig), endpoint, ""),
        namespaceSelector: onlyNamespace(asRecord(record.namespaceSelector), namespace),
      };
    }),
  };
}

/** The webhooks a configuration holds, for messages. */
export function webhookNames(configuration: KubeObject): WebhookName[] {
  const webhooks = Array.isArray(configuration.webhooks) ? configuration.webhooks : [];
  return webhooks.map((webhook) => ({
    webhook: typeof asRecord(webhook).name === "string" ? (asRecord(webhook).name as string) : "?",
    kind: configuration.kind ?? "?",
    configuration: configuration.metadata?.name ?? "?",
  }));
}

/**
 * The CRD with its conversion sent to the operator: strategy Webhook,
 * `url: https://127.0.0.1:<port>/convert` (or the path it named), the
 * kit's CA, and the review versions it listed (default v1).
 */
export function conversionToOperator(crd: KubeObject, endpoint: WebhookEndpoint): KubeObject {
  const spec = asRecord(crd.spec);
  const conversion = asRecord(spec.conversion);
  const webhook = asRecord(conversion.webhook);
  const versions = Array.isArray(webhook.conversionReviewVersions)
    ? webhook.conversionReviewVersions
    : ["v1"];
  return {
    ...crd,
    spec: {
      ...spec,
      conversion: {
        strategy: "Webhook",
        webhook: {
          conversionReviewVersions: versions,
          clientConfig: localClientConfig(asRecord(webhook.clientConfig), endpoint, "/convert"),
        },
      },
    },
  };
}

/** True when a CRD already sends its conversions to a webhook. */
export function namesConversionWebhook(crd: KubeObject): boolean {
  return asRecord(asRecord(crd.spec).conversion).strategy === "Webhook";
}

/** A clientConfig that calls 127.0.0.1:<port> on the path the Service (or URL) named, trusting the kit's CA. */
function localClientConfig(
  clientConfig: Record<string, unknown>,
  endpoint: WebhookEndpoint,
  defaultPath: string,
): Record<string, unknown> {
  let path = defaultPath;
  const service = clientConfig.service;
  if (isRecord(service) && typeof service.path === "string") path = service.path;
  if (typeof clientConfig.url === "string") {
    try {
      const url = new URL(clientConfig.url);
      path = `${url.pathname === "/" && defaultPath ? defaultPath : url.pathname}${url.search}`;
    } catch {
      // Not a URL the API server would take either: the path stays the default.
    }
  }
  return { url: `https://127.0.0.1:${endpoint.port}${path}`, caBundle: endpoint.caBundle };
}

/** The webhook's own namespace selector, narrowed to one namespace. */
function onlyNamespace(selector: Record<string, unknown>, namespace: string): Record<string, unknown> {
  const expressions: unknown[] = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  return {
    ...selector,
    matchExpressions: [
      ...expressions,
      { key: "kubernetes.io/metadata.name", operator: "In", values: [namespace] },
    ],
  };
}

function withoutCaInjection(annotations: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(annotations).filter(([key]) => !key.startsWith("cert-manager.io/")),
  );
}
