import { randomBytes } from "node:crypto";
import {
  parseClusterConfig,
  processEnvironment,
  type KwokClusterConfig,
} from "../../src/cluster/cluster-config.js";
import type { ClusterAccess } from "../../src/cluster/cluster-provider.js";
import { KwokProvider } from "../../src/cluster/kwok-provider.js";
import { KubeClient } from "../../src/kube/kube-client.js";
import { zxCommandRunner } from "../../src/process/command-runner.js";
import { silentLogger, type Logger } from "../../src/util/logger.js";

/** A fresh cluster name per test file, so reruns and parallel checkouts never collide. */
export function uniqueClusterName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString("hex")}`;
}

export function kwokConfig(name: string): KwokClusterConfig {
  const config = parseClusterConfig({ provider: "kwok", name }, processEnvironment());
  if (config.provider !== "kwok") throw new Error("expected a kwok config");
  return config;
}

export function kwokProvider(name: string, logger: Logger = silentLogger): KwokProvider {
  return new KwokProvider(kwokConfig(name), { runner: zxCommandRunner, logger });
}

export interface TestCluster {
  readonly provider: KwokProvider;
  readonly access: ClusterAccess;
  readonly client: KubeClient;
}

/** Starts a real kwok cluster for one test file; pair with `stop` in afterAll. */
export async function startTestCluster(prefix: string): Promise<TestCluster> {
  const provider = kwokProvider(uniqueClusterName(prefix));
  const access = await provider.create();
  return { provider, access, client: KubeClient.fromKubeconfig(access.kubeconfigPath, access.context) };
}
