import { homedir } from "node:os";
import { join } from "node:path";
import { UsageError } from "../errors.js";

/** The Kubernetes release the kit builds and tests against. */
export const KUBE_VERSION = "v1.35.4";

/**
 * Which cluster to run against. Exactly one provider; each carries only the
 * settings that mean something for it.
 */
export type ClusterConfig = KwokClusterConfig | KindClusterConfig | ExistingClusterConfig;

/** A kwok cluster: real etcd, kube-apiserver, controller-manager and scheduler as local processes; simulated nodes. */
export interface KwokClusterConfig {
  readonly provider: "kwok";
  /** Cluster name; kwokctl keeps its files under `<workDir>/clusters/<name>`. */
  readonly name: string;
  /** Directory with kube-apiserver, kube-controller-manager, kube-scheduler, etcd, kwok, kwokctl, kubectl. */
  readonly binDir: string;
  /** kwokctl's work directory (KWOK_WORKDIR); separate from ~/.kwok so the kit never touches the user's clusters. */
  readonly workDir: string;
}

/** A kind cluster: real nodes in Docker containers. */
export interface KindClusterConfig {
  readonly provider: "kind";
  readonly name: string;
  /** Node image, e.g. `kindest/node:v1.35.4`; kind's default when absent. */
  readonly nodeImage?: string;
  /** Where kind writes the cluster's kubeconfig (never the user's ~/.kube/config). */
  readonly kubeconfigPath: string;
  /**
   * Where the kit records which kit process started the cluster, so a kit
   * killed mid-run leaves a trace for `clean` (src/cleanup/ownership.ts).
   * parseClusterConfig puts it in the cache; a config built by hand without
   * it keeps no record.
   */
  readonly recordDir?: string;
}

/** A cluster somebody else runs; the kit never deletes it. */
export interface ExistingClusterConfig {
  readonly provider: "existing";
  readonly kubeconfigPath: string;
  /** Context to use; the kubeconfig's current-context when absent. */
  readonly context?: string;
}

export type ProviderName = ClusterConfig["provider"];
export const PROVIDERS: readonly ProviderName[] = ["kwok", "kind", "existing"];

/** Raw settings as they arrive from flags, a config file or action inputs. */
export interface ClusterSettings {
  readonly provider?: string;
  readonly name?: string;
  readonly nodeImage?: string;
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly binDir?: string;
}

/** Environment and paths the defaults depend on; injected so parsing stays pure. */
export interface ClusterEnvironment {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir: string;
}

export const DEFAULT_CLUSTER_NAME = "reconcile-conformance";

/** The kind node image when none is given: for runners that cannot pull kind's default. */
export const KIND_NODE_IMAGE_VARIABLE = "RECONCILE_CONFORMANCE_KIND_NODE_IMAGE";

/** Root of everything the kit caches: Node, Kubernetes binaries, kwok clusters. */
export function cacheRoot(environment: ClusterEnvironment): string {
  const { env, homeDir } = environment;
  return (
    env.RECONCILE_CONFORMANCE_CACHE ||
    join(env.XDG_CACHE_HOME || join(homeDir, ".cache"), "reconcile-conformance")
  );
}

/** kwokctl's work directory (KWOK_WORKDIR) for every kwok cluster the kit starts. */
export function kwokWorkDir(environment: ClusterEnvironment): string {
  return join(cacheRoot(environment), "kwok");
}

/**
 * Where the kit records who started each kind cluster: kind keeps its
 * clusters in Docker, so the kit's cache is the only place that knows which
 * of them are the kit's.
 */
export function kindRecordDir(environment: ClusterEnvironment): string {
  return join(cacheRoot(environment), "kind", "owners");
}

/** Where hack/kube-binaries/build.sh puts the binaries (same rule as the script). */
export function defaultKubeBinDir(environment: ClusterEnvironment): string {
  return (
    environment.env.RECONCILE_CONFORMANCE_KUBE_BIN_DIR || join(cacheRoot(environment), "kube", KUBE_VERSION)
  );
}

export function processEnvironment(): ClusterEnvironment {
  return { env: process.env, homeDir: homedir() };
}

// kwokctl and kind use the name in file paths, process names and container
// names; a DNS label is safe in all of them.
export const CLUSTER_NAME_PATTERN = /^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/;

/**
 * Validates raw settings into a ClusterConfig. Errors name the setting and the
 * expected form. `source` prefixes setting names (e.g. `--` for flags).
 */
export function parseClusterConfig(
  settings: ClusterSettings,
  environment: ClusterEnvironment,
  source: { prefix: string } = { prefix: "--" },
): ClusterConfig {
  const flag = (name: string) => `${source.prefix}${name}`;
  const provider = settings.provider ?? "kwok";
  const name = settings.name ?? DEFAULT_CLUSTER_NAME;
  const requireName = () => {
    if (!CLUSTER_NAME_PATTERN.test(name)) {
      throw new UsageError(
        "config/invalid-name",
        `${flag("name")} "${name}" is not a valid cluster name: use 1-40 lowercase letters, digits and '-', starting and ending with a letter or digit`,
      );
    }
  };
  const reject = (setting: keyof ClusterSettings, flagName: string) => {
    if (settings[setting] !== undefined) {
      throw new UsageError(
        "config/not-for-provider",
        `${flag(flagName)} does not apply to provider "${provider}"`,
      );
    }
  };

  switch (provider) {
    case "kwok":
      requireName();
      reject("nodeImage", "node-image");
      reject("kubeconfig", "kubeconfig");
      reject("context", "context");
      return {
        provider,
        name,
        binDir: settings.binDir ?? defaultKubeBinDir(environment),
        workDir: kwokWorkDir(environment),
      };
    case "kind": {
      requireName();
      reject("binDir", "bin-dir");
      reject("context", "context");
      // A runner without kind's registry (air-gapped, or a mirror) names its node image once, for every run.
      const nodeImage = settings.nodeImage ?? (environment.env[KIND_NODE_IMAGE_VARIABLE] || undefined);
      return {
        provider,
        name,
        ...(nodeImage === undefined ? {} : { nodeImage }),
        kubeconfigPath: settings.kubeconfig ?? join(cacheRoot(environment), "kind", `${name}.kubeconfig`),
        recordDir: kindRecordDir(environment),
      };
    }
    case "existing": {
      reject("nodeImage", "node-image");
      reject("binDir", "bin-dir");
      const kubeconfigPath =
        settings.kubeconfig ??
        firstKubeconfig(environment.env.KUBECONFIG) ??
        join(environment.homeDir, ".kube", "config");
      return {
        provider,
        kubeconfigPath,
        ...(settings.context === undefined ? {} : { context: settings.context }),
      };
    }
    default:
      throw new UsageError(
        "config/unknown-provider",
        `${flag("provider")} "${provider}" is not a provider: use one of ${PROVIDERS.join(", ")}`,
      );
  }
}

/** KUBECONFIG may list several files; like kubectl, the first one is where a context lives for us. */
function firstKubeconfig(value: string | undefined): string | undefined {
  const first = value?.split(":").find((part) => part !== "");
  return first || undefined;
}
