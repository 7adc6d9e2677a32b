import { z } from "zod";
import { UsageError } from "../../errors.js";
import type { KubeObject } from "../../kube/kube-client.js";
import { namespaceOf, objectAt, podTemplateOf } from "./manifests.js";

/** The volume (in the pod) that carries the proxy kubeconfig from its Secret. */
export const KUBECONFIG_VOLUME = "reconcile-conformance-kubeconfig";
/** The Secret key, and so the file name under the mount path. */
export const KUBECONFIG_SECRET_KEY = "kubeconfig";
/** Where the operator container sees the Secret unless told otherwise; a directory nothing else uses. */
export const DEFAULT_KUBECONFIG_MOUNT_PATH = "/var/run/reconcile-conformance";

/**
 * Flags that would point the operator somewhere other than the proxy:
 * controller-runtime and client-go read `--kubeconfig` before the
 * environment (a `--kubeconfig` the operator had is given back naming the
 * mounted kubeconfig), and `--master` (client-go's BuildConfigFromFlags, as
 * in sample-controller) overrides the server the kubeconfig names. Go's
 * flag package takes one dash as well as two.
 */
const BYPASSING_FLAGS = ["kubeconfig", "master"];

/** The kubeconfig file the operator reads: the Secret's key under the mount path. */
export function kubeconfigPathIn(mountPath: string): string {
  return `${mountPath.replace(/\/+$/, "")}/${KUBECONFIG_SECRET_KEY}`;
}

export interface OperatorDeploymentPatch {
  /** The operator's container (findOperatorDeployment chose it). */
  readonly container: string;
  /** The Secret holding the proxy kubeconfig under the key "kubeconfig" (see kubeconfigSecret). */
  readonly secretName: string;
  /** Directory the Secret is mounted at, read-only, in the operator container. */
  readonly mountPath: string;
  /**
   * Confines the operator to one namespace, as the contract's
   * `operator.namespaced` says: `<arg>=<namespace>` appended to its args
   * (replacing any it had), or the variable `env` set to it.
   */
  readonly namespaced?:
    | { readonly namespace: string; readonly arg: string }
    | { readonly namespace: string; readonly env: string };
  /** Variables added to (or replaced in) the operator container's environment. */
  readonly env?: Readonly<Record<string, string>>;
}

const envVar = z.looseObject({ name: z.string() });
const volumeMount = z.looseObject({ name: z.string(), mountPath: z.string() });
const volume = z.looseObject({ name: z.string() });
const container = z.looseObject({
  name: z.string(),
  args: z.array(z.string()).optional(),
  command: z.array(z.string()).optional(),
  env: z.array(envVar).optional(),
  volumeMounts: z.array(volumeMount).optional(),
});
const podSpec = z.looseObject({
  containers: z.array(container).min(1),
  volumes: z.array(volume).optional(),
});

type EnvVar = z.output<typeof envVar>;

/**
 * The operator's Deployment made to reach the API server only through the
 * kit's proxy. controller-runtime (ctrl.GetConfig) and client-go's
 * clientcmd honour KUBECONFIG before the in-cluster config, so the pod
 * keeps its ServiceAccount and everything that relies on it: leader
 * election still finds its namespace in the mounted ServiceAccount
 * namespace file, and its Lease goes through the proxy like any write;
 * health and metrics probes are served inside the pod and never touch the
 * API server. Only the operator container is changed: a sidecar such as
 * kube-rbac-proxy keeps its in-cluster config.
 *
 * The patch:
 * - a volume from the Secret, mounted read-only in the operator container;
 * - `KUBECONFIG=<mountPath>/kubeconfig` in its environment;
 * - no `--kubeconfig` or `--master` in its command or args (they would win over KUBECONFIG);
 * - `replicas: 1` and `strategy: Recreate`: two operator Pods at once (a
 *   rolling update's surge) would make a crash kill one of two operators
 *   and the restart bookkeeping count the wrong Pod.
 * Everything else is kept. Pure: returns a patched copy; applying it to
 * its own output changes nothing (so a re-run of setup is harmless).
 */
export function patchOperatorDeployment(deployment: KubeObject, patch: OperatorDeploymentPatch): KubeObject {
  const where = `Deployment ${namespaceOf(deployment)}/${deployment.metadata?.name ?? "?"}`;
  const copy = structuredClone(deployment);
  const parsed = podSpec.safeParse(podTemplateOf(copy));
  if (!parsed.success) {
    throw new UsageError(
      "config/invalid",
      `operator.deploy.manifests: ${where}: its pod template does not look like a pod spec (${parsed.error.issues[0]?.message ?? "invalid"})`,
    );
  }
  const pod = parsed.data;
  const operator = pod.containers.find((c) => c.name === patch.container);
  if (!operator) {
    throw new UsageError(
      "config/invalid",
      `operator.deploy.container: ${where} has no container "${patch.container}" (containers: ${pod.containers.map((c) => c.name).join(", ")})`,
    );
  }

  pod.volumes = [
    ...(pod.volumes ?? []).filter((v) => v.name !== KUBECONFIG_VOLUME),
    { name: KUBECONFIG_VOLUME, secret: { secretName: patch.secretName } },
  ];
  operator.volumeMounts = [
    // A mount at the same path would be refused by the API server as a duplicate.
    ...(operator.volumeMounts ?? []).filter(
      (m) => m.name !== KUBECONFIG_VOLUME && m.mountPath !== patch.mountPath,
    ),
    { name: KUBECONFIG_VOLUME, mountPath: patch.mountPath, readOnly: true },
  ];

  const variables: [string, string][] = [["KUBECONFIG", kubeconfigPathIn(patch.mountPath)]];
  for (const [name, value] of Object.entries(patch.env ?? {})) variables.push([name, value]);
  if (patch.namespaced && "env" in patch.namespaced) {
    variables.push([patch.namespaced.env, patch.namespaced.namespace]);
  }
  let env = operator.env ?? [];
  for (const [name, value] of variables) env = withVariable(env, name, value);
  operator.env = env;

  const kubeconfigFlag = [...(operator.command ?? []).slice(1), ...(operator.args ?? [])].some((word) =>
    /^--?kubeconfig(=|$)/.test(word),
  );
  if (operator.command) operator.command = withoutFlags(operator.command, BYPASSING_FLAGS, 1);
  let args = operator.args ? withoutFlags(operator.args, BYPASSING_FLAGS, 0) : undefined;
  // An operator given --kubeconfig may build its config from flags alone (client-go's
  // BuildConfigFromFlags tries the in-cluster config before KUBECONFIG): it keeps the flag, now
  // naming the mounted kubeconfig.
  if (kubeconfigFlag) args = [...(args ?? []), `--kubeconfig=${kubeconfigPathIn(patch.mountPath)}`];
  if (patch.namespaced && "arg" in patch.namespaced) {
    const flag = patch.namespaced.arg.replace(/^-+/, "");
    args = [...withoutFlags(args ?? [], [flag], 0), `${patch.namespaced.arg}=${patch.namespaced.namespace}`];
  }
  if (args) operator.args = args;

  const deploymentSpec = objectAt(copy, "spec");
  deploymentSpec.replicas = 1;
  deploymentSpec.strategy = { type: "Recreate" }; // and no rollingUpdate, which Recreate forbids
  objectAt(deploymentSpec, "template").spec = pod;
  return copy;
}

/** Sets a variable in place when present (so `$(VAR)` references after it keep working), else appends it. */
function withVariable(env: readonly EnvVar[], name: string, value: string): EnvVar[] {
  const entry: EnvVar = { name, value };
  const index = env.findIndex((e) => e.name === name);
  if (index < 0) return [...env, entry];
  // Later duplicates would win over the one replaced: drop them.
  return [...env.slice(0, index), entry, ...env.slice(index + 1).filter((e) => e.name !== name)];
}

/**
 * Words without the given flags, in every form Go's flag packages accept:
 * `-f=v`, `--f=v`, and `-f v` / `--f v` (the value is the next word).
 * The first `keep` words (the program, in `command`) are never removed.
 */
export function withoutFlags(words: readonly string[], flags: readonly string[], keep: number): string[] {
  const result = words.slice(0, keep);
  for (let i = keep; i < words.length; i++) {
    const word = words[i] ?? "";
    const match = /^--?([^=]+)(=.*)?$/.exec(word);
    if (!match || !flags.includes(match[1] ?? "")) {
      result.push(word);
      continue;
    }
    if (match[2] === undefined && i + 1 < words.length && !(words[i + 1] ?? "").startsWith("-")) i++;
  }
  return result;
}

/**
 * The Secret the operator's kubeconfig travels in: the proxy's URL (as the
 * kind node reaches the host), its CA and the operator's token. Opaque,
 * under the one key the Deployment patch mounts.
 */
export function kubeconfigSecret(options: {
  readonly name: string;
  readonly namespace: string;
  readonly kubeconfigYaml: string;
}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: options.name,
      namespace: options.namespace,
      labels: { "app.kubernetes.io/managed-by": "reconcile-conformance" },
    },
    type: "Opaque",
    data: { [KUBECONFIG_SECRET_KEY]: Buffer.from(options.kubeconfigYaml, "utf8").toString("base64") },
  };
}

/**
 * Who the operator is to the API server when it runs as its Deployment's
 * ServiceAccount: for the proxy's `impersonate` option, so that requests it
 * forwards with the kit's credentials are still held to the RBAC in the
 * operator's manifests (a missing verb fails as it would in production).
 */
export function serviceAccountIdentity(deployment: KubeObject): {
  readonly user: string;
  readonly groups: readonly string[];
} {
  const namespace = namespaceOf(deployment);
  const podSpec = podTemplateOf(deployment);
  const name =
    typeof podSpec.serviceAccountName === "string" && podSpec.serviceAccountName !== ""
      ? podSpec.serviceAccountName
      : "default";
  return {
    user: `system:serviceaccount:${namespace}:${name}`,
    groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
  };
}
