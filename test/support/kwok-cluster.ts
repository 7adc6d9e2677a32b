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
import { pollUntil } from "../../src/util/poll.js";

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

/**
 * Creates a namespace and waits until the controller manager has published kube-root-ca.crt
 * into it. It does so at a moment of its own; a test that lists or watches ConfigMaps from a
 * resourceVersion it took would otherwise see that ConfigMap arrive between its own writes.
 */
export async function createSettledNamespace(client: KubeClient, name: string): Promise<void> {
  await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  await pollUntil(
    async () =>
      (await client.tryGet({
        apiVersion: "v1",
        kind: "ConfigMap",
        name: "kube-root-ca.crt",
        namespace: name,
      }))
        ? { done: true, value: undefined }
        : { done: false, reason: "not yet published" },
    { description: `kube-root-ca.crt in ${name}`, timeoutMs: 30_000 },
  );
}
