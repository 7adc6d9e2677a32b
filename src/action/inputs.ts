import { KUBE_VERSION } from "../cluster/cluster-config.js";
import { UsageError } from "../errors.js";
import { binariesMode, type BinariesMode } from "../tools/kube-binaries.js";
import type { RunRequest } from "../runner/run-options.js";

/** Reads one input as the runner passes it (an empty string when not set). */
export type InputReader = (name: string) => string;

/** The Action's own settings beside the run it asks for. */
export interface ActionSettings {
  readonly request: RunRequest;
  /** Fail the step when a MUST check fails (and SHOULD ones under strict). */
  readonly failOnViolation: boolean;
  /** Leave the cluster for later steps (the post step does not delete it). */
  readonly keepCluster: boolean;
  /** kind release to install when `kind` is not on PATH. */
  readonly kindVersion: string;
  /** cluster kwok: how to get the Kubernetes binaries when they are not on the runner yet. */
  readonly binaries: BinariesMode;
}

/** The kind release the Action installs when the runner has none (its default node image is Kubernetes v1.35). */
export const DEFAULT_KIND_VERSION = "v0.33.0";

const CLUSTERS = ["kind", "kwok", "existing"] as const;

/**
 * Maps the Action's inputs (action.yml) and the variables the CLI reads too
 * (`env`) to the same RunRequest the CLI's flags make; nothing else happens
 * here. Errors name the input, or the variable.
 */
export function actionSettings(
  input: InputReader,
  env: Readonly<Record<string, string | undefined>> = {},
): ActionSettings {
  const text = (name: string) => {
    const value = input(name).trim();
    return value === "" ? undefined : value;
  };
  const flag = (name: string, fallback: boolean) => {
    const value = text(name);
    if (value === undefined) return fallback;
    if (/^(true|yes|on)$/i.test(value)) return true;
    if (/^(false|no|off)$/i.test(value)) return false;
    throw new UsageError(
      "action/invalid-input",
      `input ${name}: "${value}" is not a boolean: use true or false`,
    );
  };
  const cluster = text("cluster") ?? "kind";
  if (!(CLUSTERS as readonly string[]).includes(cluster)) {
    throw new UsageError(
      "action/invalid-input",
      `input cluster: "${cluster}" is not a cluster: use one of ${CLUSTERS.join(", ")}`,
    );
  }
  const kubeVersion = text("kube-version");
  const nodeImage = text("node-image");
  if (kubeVersion !== undefined && !/^v\d+\.\d+\.\d+$/.test(kubeVersion)) {
    throw new UsageError(
      "action/invalid-input",
      `input kube-version: "${kubeVersion}" is not a Kubernetes version: use the form v1.35.4`,
    );
  }
  if (cluster === "kwok" && kubeVersion !== undefined && kubeVersion !== KUBE_VERSION) {
    throw new UsageError(
      "action/invalid-input",
      `input kube-version: ${kubeVersion} with cluster kwok: the kit's kwok cluster runs Kubernetes ${KUBE_VERSION}, the version it builds and tests against`,
    );
  }
  if (cluster !== "kind" && nodeImage !== undefined) {
    throw new UsageError(
      "action/invalid-input",
      `input node-image applies only to cluster kind (cluster is ${cluster})`,
    );
  }
  const list = (name: string) =>
    text(name)
      ?.split(/[\s,]+/)
      .filter(Boolean);
  const suites = list("suites");
  const checks = list("checks");
  const reportDir = text("report-dir");
  const shard = text("shard");
  const generatedUpdates = text("generated-updates");
  const seed = text("seed");
  const updateFaults = text("update-faults");
  const config = text("config");
  const kubeconfig = text("kubeconfig");
  return {
    request: {
      ...(config === undefined ? {} : { config }),
      cluster: {
        provider: cluster,
        ...(cluster === "kind"
          ? {
              nodeImage: nodeImage ?? (kubeVersion === undefined ? undefined : `kindest/node:${kubeVersion}`),
            }
          : {}),
        ...(cluster === "existing" && kubeconfig !== undefined ? { kubeconfig } : {}),
      },
      ...(suites ? { suites } : {}),
      ...(checks ? { checks } : {}),
      ...(reportDir === undefined ? {} : { reportDir }),
      strict: flag("strict", false),
      // The cluster is what keep-cluster keeps; a failed run's namespaces stay with it for inspection.
      keep: flag("keep-cluster", false),
      ...(shard === undefined ? {} : { shard }),
      ...(generatedUpdates === undefined ? {} : { generatedUpdates }),
      ...(seed === undefined ? {} : { seed }),
      ...(updateFaults === undefined ? {} : { updateFaults }),
    },
    failOnViolation: flag("fail-on-violation", true),
    keepCluster: flag("keep-cluster", false),
    kindVersion: text("kind-version") ?? DEFAULT_KIND_VERSION,
    // An empty input leaves it to RECONCILE_CONFORMANCE_BINARIES, as the CLI does.
    binaries: binariesMode(text("binaries"), env, "input binaries"),
  };
}
