import { readdir, readFile, stat } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";
import { z } from "zod";
import { defaultKubeBinDir, processEnvironment } from "../../cluster/cluster-config.js";
import { InfrastructureError, UsageError } from "../../errors.js";
import type { KubeObject } from "../../kube/kube-client.js";
import { tailLines, type CommandRunner } from "../../process/command-runner.js";
import type { OperatorDeploy } from "../../contract/operator-deploy.js";
import { errnoText } from "../../util/files.js";
import { isRecord } from "../../util/records.js";

const FIELD = "operator.deploy.manifests";

/** The file names that make a directory a kustomization, as kustomize looks for them. */
export const KUSTOMIZATION_FILES = ["kustomization.yaml", "kustomization.yml", "Kustomization"] as const;

const MANIFEST_EXTENSIONS = [".yaml", ".yml", ".json"];

export interface RenderOptions {
  readonly runner: CommandRunner;
  /** The contract file's directory: `manifests` paths are relative to it. */
  readonly contractDir: string;
  /** kubectl to render kustomizations with; default the one in the kit's Kubernetes binaries. */
  readonly kubectl?: string;
  readonly signal?: AbortSignal;
}

/**
 * The operator's manifests as objects, in the order they can be applied:
 * a kustomize directory is rendered with `kubectl kustomize` (the kustomize
 * built into kubectl, so no second tool is needed), YAML files are read and
 * split into documents, a directory without a kustomization contributes its
 * YAML files in name order (as `kubectl apply -f DIR` does; not recursive).
 * Errors name the field, the path and what it held.
 */
export async function renderManifests(
  spec: Pick<OperatorDeploy, "manifests">,
  options: RenderOptions,
): Promise<KubeObject[]> {
  const objects: KubeObject[] = [];
  for (const [index, relative] of spec.manifests.entries()) {
    const field = `${FIELD}[${index}]`;
    const path = isAbsolute(relative) ? relative : resolve(options.contractDir, relative);
    const kind = await pathKind(field, path);
    if (kind === "file") {
      objects.push(...parseManifestText(await readText(field, path), `${field}: ${path}`));
      continue;
    }
    const entries = await readdir(path);
    if (KUSTOMIZATION_FILES.some((name) => entries.includes(name))) {
      objects.push(...(await kustomize(field, path, options)));
      continue;
    }
    const files = entries.filter((name) => MANIFEST_EXTENSIONS.some((ext) => name.endsWith(ext))).sort();
    if (files.length === 0) {
      throw new UsageError(
        "config/invalid",
        `${field}: ${path} holds neither a kustomization (${KUSTOMIZATION_FILES.join(", ")}) nor YAML files`,
      );
    }
    for (const file of files) {
      const filePath = join(path, file);
      objects.push(...parseManifestText(await readText(field, filePath), `${field}: ${filePath}`));
    }
  }
  if (objects.length === 0) {
    throw new UsageError("config/invalid", `${FIELD}: the manifests hold no objects`);
  }
  return inApplyOrder(objects);
}

/** kubectl from the Kubernetes binaries the kit installs (hack/kube-binaries/build.sh). */
export function defaultKubectl(): string {
  return join(defaultKubeBinDir(processEnvironment()), "kubectl");
}

async function kustomize(field: string, dir: string, options: RenderOptions): Promise<KubeObject[]> {
  const kubectl = options.kubectl ?? defaultKubectl();
  let result;
  try {
    result = await options.runner.run([kubectl, "kustomize", dir], { signal: options.signal });
  } catch (error) {
    throw new InfrastructureError("deploy/kustomize-failed", `cannot run ${kubectl} kustomize ${dir}`, [], {
      cause: error,
    });
  }
  // 126/127: the shell could not run kubectl at all; the kit's install is at fault, not the manifests.
  if (result.exitCode === 126 || result.exitCode === 127) {
    throw new InfrastructureError(
      "deploy/kubectl-missing",
      `${field}: cannot run ${kubectl} to render the kustomization in ${dir} (exit ${result.exitCode}); install the Kubernetes binaries (hack/kube-binaries/build.sh)`,
      tailLines(result.stderr, 5),
    );
  }
  if (result.exitCode !== 0) {
    throw new UsageError(
      "config/invalid",
      `${field}: kubectl kustomize ${dir} failed (exit ${result.exitCode}): ${tailLines(result.stderr, 5).join(" | ")}`,
    );
  }
  return parseManifestText(result.stdout, `${field}: kubectl kustomize ${dir}`);
}

/**
 * The objects of a multi-document YAML text. Empty documents are skipped,
 * `kind: List` documents are expanded (as kubectl does); anything that is
 * not an object with apiVersion, kind and metadata.name is an error naming `where`.
 */
export function parseManifestText(text: string, where: string): KubeObject[] {
  const objects: KubeObject[] = [];
  for (const [index, document] of parseAllDocuments(text).entries()) {
    const error = document.errors[0];
    if (error) throw new UsageError("config/invalid", `${where}: not valid YAML: ${error.message}`);
    const value: unknown = document.toJS();
    if (value === null || value === undefined) continue;
    const listed = kubeList.safeParse(value);
    const items = listed.success ? listed.data.items : [value];
    for (const item of items) {
      const object = kubeObject.safeParse(item);
      if (!object.success) {
        throw new UsageError(
          "config/invalid",
          `${where}: document ${index + 1} is not a Kubernetes object (expected apiVersion, kind and metadata.name)`,
        );
      }
      objects.push(object.data);
    }
  }
  return objects;
}

const kubeObject = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  metadata: z.looseObject({ name: z.string().min(1), namespace: z.string().optional() }),
});

const kubeList = z.looseObject({
  apiVersion: z.literal("v1"),
  kind: z.literal("List"),
  items: z.array(z.unknown()),
});

/**
 * Apply tiers: what other objects need comes first. A Namespace before
 * anything in it, CRDs before custom resources (and before the operator
 * that watches them), the ServiceAccount, roles and then their bindings
 * before the Pods that use them, configuration before the workloads that
 * mount it; the rest, and each tier, keeps the order it was written in.
 */
const APPLY_TIERS: readonly (readonly string[])[] = [
  ["Namespace"],
  ["CustomResourceDefinition"],
  ["ServiceAccount"],
  ["ClusterRole", "Role"],
  ["ClusterRoleBinding", "RoleBinding"],
  ["ConfigMap", "Secret"],
];

function applyTier(object: KubeObject): number {
  const tier = APPLY_TIERS.findIndex((kinds) => kinds.includes(object.kind ?? ""));
  return tier < 0 ? APPLY_TIERS.length : tier;
}

/** The objects in apply order (see APPLY_TIERS); stable within a tier. */
export function inApplyOrder(objects: readonly KubeObject[]): KubeObject[] {
  return objects
    .map((object, position) => ({ object, position, tier: applyTier(object) }))
    .sort((a, b) => a.tier - b.tier || a.position - b.position)
    .map(({ object }) => object);
}

/** What `findOperatorDeployment` picked: the Deployment and its operator container. */
export interface OperatorTarget {
  readonly deployment: KubeObject;
  readonly name: string;
  readonly namespace: string;
  /** The operator's container in the pod template. */
  readonly container: string;
}

/** A Deployment without metadata.namespace lands in the default namespace, as kubectl puts it. */
export function namespaceOf(object: KubeObject): string {
  return object.metadata?.namespace ?? "default";
}

const podTemplateContainers = z.object({
  spec: z.object({
    template: z.object({
      spec: z.object({ containers: z.array(z.object({ name: z.string() })).min(1) }),
    }),
  }),
});

/** The container names of a Deployment's pod template; UsageError when it has none. */
export function containerNames(deployment: KubeObject): string[] {
  const parsed = podTemplateContainers.safeParse(deployment);
  if (!parsed.success) {
    throw new UsageError(
      "config/invalid",
      `${FIELD}: Deployment ${namespaceOf(deployment)}/${deployment.metadata?.name ?? "?"} has no containers in spec.template.spec.containers`,
    );
  }
  return parsed.data.spec.template.spec.containers.map((c) => c.name);
}

/**
 * Which Deployment of the manifests is the operator, and which of its
 * containers: `deploy.deployment` and `deploy.container` when given; else
 * the only Deployment, and its only container or the one kubebuilder names
 * "manager". Anything ambiguous is an error that lists the choices and the
 * field that settles it.
 */
export function findOperatorDeployment(
  objects: readonly KubeObject[],
  spec: Pick<OperatorDeploy, "deployment" | "container">,
): OperatorTarget {
  const deployments = objects.filter((o) => o.apiVersion === "apps/v1" && o.kind === "Deployment");
  const deployment = chooseDeployment(deployments, spec.deployment);
  return {
    deployment,
    name: deployment.metadata?.name ?? "",
    namespace: namespaceOf(deployment),
    container: chooseContainer(deployment, spec.container),
  };
}

function describeDeployment(deployment: KubeObject): string {
  return `${namespaceOf(deployment)}/${deployment.metadata?.name ?? "?"}`;
}

function chooseDeployment(
  deployments: readonly KubeObject[],
  wanted: OperatorDeploy["deployment"],
): KubeObject {
  const listed = deployments.map(describeDeployment).join(", ") || "none";
  if (wanted) {
    const found = deployments.find(
      (d) => d.metadata?.name === wanted.name && namespaceOf(d) === wanted.namespace,
    );
    if (found) return found;
    throw new UsageError(
      "config/invalid",
      `operator.deploy.deployment: the manifests hold no Deployment ${wanted.namespace}/${wanted.name} (Deployments: ${listed})`,
    );
  }
  const [first, ...others] = deployments;
  if (!first) {
    throw new UsageError(
      "config/invalid",
      `${FIELD}: the manifests hold no Deployment (apps/v1); the operator must run as one`,
    );
  }
  if (others.length === 0) return first;
  throw new UsageError(
    "config/invalid",
    `operator.deploy.deployment: the manifests hold ${deployments.length} Deployments (${listed}); name the operator's, e.g. deployment: { name: ${first.metadata?.name ?? "NAME"}, namespace: ${namespaceOf(first)} }`,
  );
}

function chooseContainer(deployment: KubeObject, wanted: string | undefined): string {
  const containers = containerNames(deployment);
  const where = `Deployment ${describeDeployment(deployment)}`;
  if (wanted !== undefined) {
    if (containers.includes(wanted)) return wanted;
    throw new UsageError(
      "config/invalid",
      `operator.deploy.container: ${where} has no container "${wanted}" (containers: ${containers.join(", ")})`,
    );
  }
  const [only, ...others] = containers;
  if (only !== undefined && others.length === 0) return only;
  if (containers.includes("manager")) return "manager";
  throw new UsageError(
    "config/invalid",
    `operator.deploy.container: ${where} has ${containers.length} containers (${containers.join(", ")}) and none is named "manager"; name the operator's, e.g. container: ${only ?? "NAME"}`,
  );
}

const containerList = z.array(z.looseObject({ name: z.string() }));

/**
 * A copy of the Deployment whose operator container runs `image` with
 * imagePullPolicy IfNotPresent: the image was loaded into the kind node and
 * exists in no registry, and a `:latest` tag (kubebuilder writes
 * `controller:latest`) would otherwise default to Always and fail to pull.
 */
export function withOperatorImage(deployment: KubeObject, container: string, image: string): KubeObject {
  const copy = structuredClone(deployment);
  const template = podTemplateOf(copy);
  const parsed = containerList.safeParse(template.containers);
  const containers = parsed.success ? parsed.data : [];
  const target = containers.find((c) => c.name === container);
  if (!target) {
    throw new UsageError(
      "config/invalid",
      `operator.deploy.container: Deployment ${namespaceOf(deployment)}/${deployment.metadata?.name ?? "?"} has no container "${container}"`,
    );
  }
  target.image = image;
  target.imagePullPolicy = "IfNotPresent";
  template.containers = containers;
  return copy;
}

/** The pod spec object inside a Deployment (mutable: callers work on a copy). */
export function podTemplateOf(deployment: KubeObject): Record<string, unknown> {
  const spec = objectAt(deployment, "spec");
  const template = objectAt(spec, "template");
  return objectAt(template, "spec");
}

/** The object under `key` (the same one, not a copy); UsageError when there is none. */
export function objectAt(parent: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = parent[key];
  if (!isRecord(value))
    throw new UsageError("config/invalid", `${FIELD}: the Deployment has no ${key} object`);
  return value;
}

/** The operator's manifests ready to apply: rendered, ordered, the operator found and given its image. */
export async function operatorManifests(
  spec: Pick<OperatorDeploy, "manifests" | "deployment" | "container" | "image">,
  options: RenderOptions,
): Promise<{ objects: KubeObject[]; target: OperatorTarget }> {
  const rendered = await renderManifests(spec, options);
  const found = findOperatorDeployment(rendered, spec);
  const deployment = withOperatorImage(found.deployment, found.container, spec.image);
  return {
    objects: rendered.map((o) => (o === found.deployment ? deployment : o)),
    target: { ...found, deployment },
  };
}

async function pathKind(field: string, path: string): Promise<"file" | "directory"> {
  try {
    const info = await stat(path);
    if (info.isDirectory()) return "directory";
    if (info.isFile()) return "file";
  } catch (error) {
    throw new UsageError("config/invalid", `${field}: cannot read ${path}: ${errnoText(error)}`);
  }
  throw new UsageError("config/invalid", `${field}: ${path} is neither a file nor a directory`);
}

async function readText(field: string, path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw new UsageError("config/invalid", `${field}: cannot read ${path}: ${errnoText(error)}`);
  }
}
