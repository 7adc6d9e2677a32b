import { z } from "zod";
import { UsageError } from "../errors.js";

/**
 * `operator.deploy`: the operator runs in the cluster as its own image and
 * manifests ("deployed mode", kind clusters only), instead of as a local
 * `operator.command`. Proposed for src/contract/contract-schema.ts, where it
 * sits beside `command` under `operator`; exactly one of the two is given
 * (see operatorModeIssues). Kept here, exported, so that it can be tested
 * before the merge.
 */

/**
 * An image reference as Docker writes it: `[registry[:port]/]path[:tag][@digest]`,
 * path components lowercase. The distribution grammar, less its rarely seen
 * corners; anything it refuses, `docker build -t` refuses too.
 */
const IMAGE_PATTERN = new RegExp(
  "^" +
    "(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?" +
    "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*" +
    "(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?" +
    "(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?" +
    "$",
);

/** Object names (Deployments): a DNS subdomain. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** Namespaces and container names: a DNS label. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

const IMAGE_EXPECTED =
  'expected the image your workflow builds, e.g. "example.com/webapp-operator:ci" (lowercase repository, optional tag)';

/** An image reference, refused with `expected` when it is not one. */
export function imageReference(expected: string = IMAGE_EXPECTED) {
  return z.string({ error: expected }).regex(IMAGE_PATTERN, { error: expected });
}

const manifestPath = z
  .string({ error: "expected a path relative to the contract file" })
  .min(1, { error: "expected a path relative to the contract file" });

const MANIFESTS_EXPECTED =
  'expected a kustomize directory (e.g. "config/default"), a YAML file, or a list of YAML files and directories';

export const operatorDeploySchema = z
  .strictObject({
    image: imageReference().describe(
      "The operator's image, as built by your workflow before the kit runs (e.g. docker build -t IMAGE .). The kit sets it on the operator's container, with imagePullPolicy IfNotPresent.",
    ),
    manifests: z
      .union([manifestPath, z.array(manifestPath, { error: MANIFESTS_EXPECTED }).min(1)], {
        error: MANIFESTS_EXPECTED,
      })
      .transform((value): string[] => (typeof value === "string" ? [value] : value))
      .describe(
        "The operator's manifests, relative to the contract file: a kustomize directory (one holding kustomization.yaml, as kubebuilder's config/default), a YAML file, or a list of YAML files and directories of YAML files.",
      ),
    deployment: z
      .strictObject({
        name: z
          .string({ error: "expected the Deployment's metadata.name" })
          .regex(DNS_SUBDOMAIN, { error: "expected a Kubernetes object name" }),
        namespace: z
          .string({ error: "expected the Deployment's metadata.namespace" })
          .regex(DNS_LABEL, { error: "expected a namespace name" }),
      })
      .optional()
      .describe("Which Deployment in the manifests is the operator (default: the only Deployment there is)."),
    container: z
      .string({ error: "expected a container name" })
      .regex(DNS_LABEL, { error: "expected a container name" })
      .optional()
      .describe('Which container of the Deployment is the operator (default: the only one, or "manager").'),
    loadImage: z
      .boolean({ error: "expected true or false" })
      .default(true)
      .describe(
        "Load the image into the kind cluster first (kind load docker-image); false when the cluster can pull it by itself.",
      ),
  })
  .describe("Run the operator in the cluster from its image and manifests (kind clusters).");

/** `operator.deploy` as written. */
export type OperatorDeployInput = z.input<typeof operatorDeploySchema>;
/** `operator.deploy` with defaults filled in and `manifests` always a list (paths as written). */
export type OperatorDeploy = z.output<typeof operatorDeploySchema>;

/** A place in the contract and what is wrong there. */
export interface FieldIssue {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/**
 * The one rule `operator` gains with `deploy`: the operator is either a
 * local command or a deployment, never both, never neither. Settings that
 * only mean something for a local process are refused with `deploy`
 * rather than silently ignored. For `.superRefine` on the operator object;
 * `passThroughEnv` counts as given when non-empty (it defaults to []).
 */
export function operatorModeIssues(operator: {
  readonly command?: unknown;
  readonly deploy?: unknown;
  readonly workingDir?: unknown;
  readonly passThroughEnv?: readonly unknown[];
  readonly webhooks?: unknown;
  readonly metrics?: unknown;
}): FieldIssue[] {
  const hasCommand = operator.command !== undefined;
  const hasDeploy = operator.deploy !== undefined;
  if (hasCommand && hasDeploy) {
    return [
      {
        path: ["deploy"],
        message:
          "expected either command (the operator as a local process) or deploy (the operator in the cluster), not both",
      },
    ];
  }
  if (!hasCommand && !hasDeploy) {
    return [
      {
        path: ["command"],
        message:
          'expected command (e.g. ["./bin/manager"]) or deploy (e.g. { image: "example.com/op:ci", manifests: "config/default" })',
      },
    ];
  }
  if (!hasDeploy) return [];
  const issues: FieldIssue[] = [];
  if (operator.workingDir !== undefined) {
    issues.push({
      path: ["workingDir"],
      message: "only for command: a deployed operator has no working directory here",
    });
  }
  if (operator.webhooks !== undefined) {
    issues.push({
      path: ["webhooks"],
      message:
        "only for command: a deployed operator's webhooks are its manifests' business (a Service and certificates in the cluster)",
    });
  }
  if (operator.metrics !== undefined) {
    issues.push({
      path: ["metrics"],
      message:
        "only for command: the kit reads the metrics of operator processes it starts on this machine (a deployed operator's quiet period decides)",
    });
  }
  if ((operator.passThroughEnv?.length ?? 0) > 0) {
    issues.push({
      path: ["passThroughEnv"],
      message: "only for command: a deployed operator does not inherit the kit's environment",
    });
  }
  return issues;
}

/**
 * Validates `operator.deploy` on its own: UsageError naming each field path
 * (`operator.deploy.image: ...`), as the contract loader reports issues.
 */
export function parseOperatorDeploy(input: unknown, at = "operator.deploy"): OperatorDeploy {
  const parsed = operatorDeploySchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => {
    const path = [at, ...issue.path.map((part) => (typeof part === "number" ? `[${part}]` : String(part)))]
      .join(".")
      .replaceAll(".[", "[");
    const message =
      issue.code === "unrecognized_keys"
        ? `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}`
        : issue.message;
    return `${path}: ${message}`;
  });
  throw new UsageError("config/invalid", lines.join("\n"));
}
