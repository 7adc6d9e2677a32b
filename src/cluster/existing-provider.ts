import { describeError, InfrastructureError } from "../errors.js";
import { KubeClient } from "../kube/kube-client.js";
import { pathExists } from "../util/files.js";
import type { Logger } from "../util/logger.js";
import { waitForApiReady } from "./cluster-readiness.js";
import type { ExistingClusterConfig } from "./cluster-config.js";
import type { ClusterAccess, ClusterProvider, CreateOptions, DeleteOutcome } from "./cluster-provider.js";

/**
 * A cluster the user already runs. "Create" only checks that it answers;
 * "delete" does nothing, because the kit never removes what it did not make.
 */
export class ExistingProvider implements ClusterProvider {
  readonly provider = "existing";

  constructor(
    private readonly config: ExistingClusterConfig,
    private readonly deps: { readonly logger: Logger },
  ) {}

  async create(options: CreateOptions = {}): Promise<ClusterAccess> {
    if (!(await pathExists(this.config.kubeconfigPath))) {
      throw new InfrastructureError(
        "cluster/kubeconfig-missing",
        `provider existing: kubeconfig ${this.config.kubeconfigPath} does not exist (set --kubeconfig or KUBECONFIG)`,
      );
    }
    const client = KubeClient.fromKubeconfig(this.config.kubeconfigPath, this.config.context);
    const context = this.config.context ?? client.config.getCurrentContext();
    await waitForApiReady(client, {
      description: `the API server of context "${context}"`,
      timeoutMs: 15_000,
      signal: options.signal,
    })
      .catch((error: unknown) => {
        throw new InfrastructureError(
          "cluster/unreachable",
          `provider existing: context "${context}" in ${this.config.kubeconfigPath} does not answer`,
          [describeError(error)],
        );
      })
      .finally(() => client.close());
    this.deps.logger.info(`existing: using context "${context}" (${client.server})`);
    return {
      provider: "existing",
      name: context,
      kubeconfigPath: this.config.kubeconfigPath,
      context,
      apiServerUrl: client.server,
    };
  }

  delete(): Promise<DeleteOutcome> {
    // Not the kit's to remove: as far as the kit is concerned, there is nothing to delete.
    return Promise.resolve("absent");
  }

  collectLogs(): Promise<string[]> {
    return Promise.resolve([]);
  }

  processIds(): Promise<number[]> {
    return Promise.resolve([]);
  }
}
