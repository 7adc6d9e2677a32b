import { isAbsolute } from "node:path";
import { z } from "zod";
import type { KubeObject } from "../kube/kube-client.js";
import type { FieldIssue } from "./operator-deploy.js";

/**
 * `operator.webhooks`: the operator's own admission (and conversion)
 * webhooks, served by the operator process as it ships, the way envtest
 * serves them in controller-runtime's tests. The kit makes a serving
 * certificate for 127.0.0.1, writes it where the operator reads it,
 * installs each scenario's copy of the webhook configurations with
 * `clientConfig.url` pointing at the operator's port, and waits until the
 * webhook answers before the sample is created (src/webhooks/).
 */

const FLAG = /^-{1,2}[A-Za-z0-9][A-Za-z0-9-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const manifestPath = z
  .string({ error: "expected a path relative to the contract file" })
  .min(1, { error: "expected a path relative to the contract file" });

const MANIFESTS_EXPECTED =
  'expected the webhook configurations\' manifest (kubebuilder: "config/webhook/manifests.yaml") or a list of them';

const flag = (example: string) => z.string().regex(FLAG, { error: `expected a flag such as "${example}"` });
const envName = z.string().regex(ENV_NAME, { error: "expected an environment variable name" });

/** controller-runtime's webhook server listens here unless told otherwise. */
export const DEFAULT_WEBHOOK_PORT = 9443;

export const operatorWebhooksSchema = z
  .strictObject({
    manifests: z
      .union([manifestPath, z.array(manifestPath, { error: MANIFESTS_EXPECTED })], {
        error: MANIFESTS_EXPECTED,
      })
      .transform((value): string[] => (typeof value === "string" ? [value] : value))
      .default([])
      .describe(
        "The MutatingWebhookConfiguration and ValidatingWebhookConfiguration manifests, relative to the contract file (kubebuilder: config/webhook/manifests.yaml). Each scenario gets its own copy, limited to its namespace, calling https://127.0.0.1:<port><path> with the kit's CA.",
      ),
    port: z
      .number({ error: "expected a port number" })
      .int({ error: "expected a port number" })
      .min(1, { error: "expected a port number" })
      .max(65535, { error: "expected a port number" })
      .default(DEFAULT_WEBHOOK_PORT)
      .describe(
        `The port the operator's webhook server listens on (default ${DEFAULT_WEBHOOK_PORT}, controller-runtime's). Without portArg or portEnv every scenario's operator needs this one port, so scenarios run one at a time.`,
      ),
    portArg: flag("--webhook-port")
      .optional()
      .describe(
        'A flag the kit appends as "<flag>=<port>" to give each scenario\'s operator a port of its own, so scenarios run side by side.',
      ),
    portEnv: envName.optional().describe("A variable the kit sets to the port, as portArg."),
    certDir: z
      .string({ error: "expected an absolute directory" })
      .refine((path) => isAbsolute(path), { error: "expected an absolute directory" })
      .optional()
      .describe(
        "A fixed directory the operator reads tls.crt and tls.key from. Default: controller-runtime's $TMPDIR/k8s-webhook-server/serving-certs, with TMPDIR set for the operator to a directory of the run.",
      ),
    certDirArg: flag("--webhook-cert-path")
      .optional()
      .describe(
        'A flag the kit appends as "<flag>=<directory>" naming where it wrote tls.crt and tls.key (kubebuilder: "--webhook-cert-path").',
      ),
    certDirEnv: envName.optional().describe("A variable the kit sets to that directory, as certDirArg."),
    conversion: z
      .array(z.string().min(1), {
        error: "expected a list of CRD names, e.g. [memcacheds.cache.example.com]",
      })
      .default([])
      .describe(
        "CRDs (by metadata.name) whose versions the operator converts: the kit sets their conversion to the operator's /convert (with the kit's CA) when it installs them; a CRD of crds that already names a conversion webhook is pointed there too. Conversion is cluster-wide, so scenarios then run one at a time.",
      ),
  })
  .describe(
    "The operator's webhooks, served by the operator process as it ships (process mode on a cluster whose API server runs on this machine: kwok).",
  );

export type OperatorWebhooksDocument = z.output<typeof operatorWebhooksSchema>;

/** What the schema cannot say about one field alone; for `.superRefine` on `operator.webhooks`. */
export function webhookSettingIssues(webhooks: OperatorWebhooksDocument): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const both = (a: keyof OperatorWebhooksDocument, b: keyof OperatorWebhooksDocument) =>
    webhooks[a] !== undefined && webhooks[b] !== undefined;
  if (both("portArg", "portEnv")) {
    issues.push({ path: ["portEnv"], message: "expected at most one of portArg and portEnv" });
  }
  const certWays = (["certDir", "certDirArg", "certDirEnv"] as const).filter(
    (k) => webhooks[k] !== undefined,
  );
  if (certWays.length > 1) {
    issues.push({
      path: [certWays[1] ?? "certDir"],
      message: `expected at most one of certDir, certDirArg and certDirEnv (got ${certWays.join(", ")})`,
    });
  }
  if (webhooks.manifests.length === 0 && webhooks.conversion.length === 0) {
    issues.push({
      path: ["manifests"],
      message:
        "expected the webhook configurations (e.g. manifests: config/webhook/manifests.yaml) or conversion CRDs: with neither there is nothing to serve",
    });
  }
  return issues;
}

/** How the operator is told something: a flag, a variable, or nothing (it has a fixed place). */
export type Telling = { readonly arg: string } | { readonly env: string };

/** `operator.webhooks` as the runner uses it: manifests read, ways of telling resolved. */
export interface OperatorWebhooks {
  /** The admission webhook configurations, each with the file it came from. */
  readonly configurations: readonly { readonly file: string; readonly object: KubeObject }[];
  readonly port: number;
  /** How each scenario's operator is given a port of its own; absent: it always listens on `port`. */
  readonly portTelling?: Telling;
  /** Where the certificate goes: told by flag or variable, a fixed directory, or controller-runtime's under TMPDIR. */
  readonly certDir: Telling | { readonly path: string } | { readonly underTmpdir: true };
  /** CRD names whose conversion the operator serves. */
  readonly conversion: readonly string[];
}

/** The admission kinds a webhook manifest may hold. */
export const WEBHOOK_CONFIGURATION_KINDS = [
  "MutatingWebhookConfiguration",
  "ValidatingWebhookConfiguration",
] as const;

/** Resolves the document's settings, given the configurations already read. Pure. */
export function resolveWebhooks(
  document: OperatorWebhooksDocument,
  configurations: OperatorWebhooks["configurations"],
): OperatorWebhooks {
  const portTelling: Telling | undefined = document.portArg
    ? { arg: document.portArg }
    : document.portEnv
      ? { env: document.portEnv }
      : undefined;
  const certDir: OperatorWebhooks["certDir"] = document.certDirArg
    ? { arg: document.certDirArg }
    : document.certDirEnv
      ? { env: document.certDirEnv }
      : document.certDir
        ? { path: document.certDir }
        : { underTmpdir: true };
  return {
    configurations,
    port: document.port,
    ...(portTelling ? { portTelling } : {}),
    certDir,
    conversion: document.conversion,
  };
}

/** Why scenarios must run one at a time with these webhooks, or undefined when they need not. */
export function webhooksSerializeScenarios(webhooks: OperatorWebhooks | undefined): string | undefined {
  if (webhooks === undefined) return undefined;
  if (webhooks.conversion.length > 0) {
    return `the operator converts ${webhooks.conversion.join(", ")}, and a CRD's conversion webhook is one for the whole cluster`;
  }
  if (webhooks.portTelling === undefined) {
    return `every scenario's operator serves its webhooks on port ${webhooks.port} (operator.webhooks.portArg or portEnv would give each its own)`;
  }
  return undefined;
}
