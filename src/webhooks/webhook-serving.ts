import { join } from "node:path";
import type { OperatorWebhooks, Telling } from "../contract/operator-webhooks.js";
import type { ProviderName } from "../cluster/cluster-config.js";
import { UsageError } from "../errors.js";
import type { KubeObject } from "../kube/kube-client.js";
import {
  controllerRuntimeCertDir,
  createWebhookCertificate,
  writeServingCertificate,
  type WebhookCertificate,
} from "./serving-certificate.js";
import { conversionToOperator, scenarioWebhookConfiguration } from "./webhook-configurations.js";

/**
 * One run's webhook serving: the certificate, written where the operator
 * reads it, and what every operator process of the run is told so that it
 * finds it. Scenario by scenario only the port may differ (portTold).
 */
export interface WebhookServing {
  readonly webhooks: OperatorWebhooks;
  readonly certificate: WebhookCertificate;
  /** The directory tls.crt and tls.key were written to. */
  readonly certDir: string;
  /** Appended to every operator's command line. */
  readonly argv: readonly string[];
  /** Added to every operator's environment (TMPDIR, for controller-runtime's default directory). */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * Makes the run's certificate and writes it (under `runDir` unless the
 * contract names a fixed directory). The API server calls the webhooks at
 * 127.0.0.1, so it must run on this machine: kwok's binary runtime does, an
 * existing cluster is taken at its word, kind's runs in a container whose
 * 127.0.0.1 is its own and is refused.
 */
export async function prepareWebhookServing(
  webhooks: OperatorWebhooks,
  runDir: string,
  provider: ProviderName,
): Promise<WebhookServing> {
  if (provider === "kind") {
    throw new UsageError(
      "config/webhooks-unreachable",
      "operator.webhooks: a kind cluster's API server runs in a container and cannot call an operator process on this machine at 127.0.0.1; run with --cluster kwok, or deploy the operator into the cluster (operator.deploy) with its webhook Service and certificates",
    );
  }
  const certificate = createWebhookCertificate();
  const told = webhooks.certDir;
  let certDir: string;
  let argv: string[] = [];
  let env: Record<string, string> = {};
  if ("path" in told) {
    certDir = told.path;
  } else if ("underTmpdir" in told) {
    // controller-runtime reads os.TempDir()/k8s-webhook-server/serving-certs: a TMPDIR of the run's own
    // puts the certificate where an unmodified kubebuilder operator looks, and nowhere shared.
    const tmpdir = join(runDir, "operator-tmp");
    certDir = controllerRuntimeCertDir(tmpdir);
    env = { TMPDIR: tmpdir };
  } else {
    certDir = join(runDir, "serving-certs");
    ({ argv, env } = tell(told, certDir));
  }
  await writeServingCertificate(certDir, certificate);
  return { webhooks, certificate, certDir, argv, env };
}

/** What an operator is told so that its webhook server listens on `port` (nothing when it has a fixed port). */
export function portTold(
  webhooks: OperatorWebhooks,
  port: number,
): { argv: string[]; env: Record<string, string> } {
  return webhooks.portTelling ? tell(webhooks.portTelling, String(port)) : { argv: [], env: {} };
}

/** A scenario's copies of the webhook configurations, calling its operator on `port`. */
export function scenarioConfigurations(
  serving: WebhookServing,
  namespace: string,
  port: number,
): KubeObject[] {
  return serving.webhooks.configurations.map(({ object }) =>
    scenarioWebhookConfiguration(object, namespace, { port, caBundle: serving.certificate.caBundle }),
  );
}

/** The contract's CRDs as the run installs them: those the operator converts sent to its /convert on the fixed port. */
export function crdsForServing(
  crds: readonly { readonly object: KubeObject }[],
  serving: WebhookServing | undefined,
): KubeObject[] {
  return crds.map(({ object }) =>
    serving?.webhooks.conversion.includes(object.metadata?.name ?? "")
      ? conversionToOperator(object, { port: serving.webhooks.port, caBundle: serving.certificate.caBundle })
      : object,
  );
}

function tell(telling: Telling, value: string): { argv: string[]; env: Record<string, string> } {
  return "arg" in telling
    ? { argv: [`${telling.arg}=${value}`], env: {} }
    : { argv: [], env: { [telling.env]: value } };
}
