import type { CommandRunner } from "../process/command-runner.js";
import type { Logger } from "../util/logger.js";
import type { ClusterConfig } from "./cluster-config.js";
import type { ClusterProvider } from "./cluster-provider.js";
import { ExistingProvider } from "./existing-provider.js";
import { KindProvider } from "./kind-provider.js";
import { KwokProvider } from "./kwok-provider.js";

export type { ClusterAccess, ClusterProvider, CreateOptions } from "./cluster-provider.js";
export * from "./cluster-config.js";

export interface ProviderDeps {
  readonly runner: CommandRunner;
  readonly logger: Logger;
}

/** The provider for a validated cluster config. */
export function createProvider(config: ClusterConfig, deps: ProviderDeps): ClusterProvider {
  switch (config.provider) {
    case "kwok":
      return new KwokProvider(config, deps);
    case "kind":
      return new KindProvider(config, deps);
    case "existing":
      return new ExistingProvider(config, deps);
  }
}
