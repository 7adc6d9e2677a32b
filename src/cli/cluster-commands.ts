import { handOverCluster } from "../cleanup/ownership.js";
import {
  createProvider,
  parseClusterConfig,
  type ClusterConfig,
  type ClusterSettings,
} from "../cluster/index.js";
import { ExitCode, UsageError } from "../errors.js";
import { binariesMode, ensureKubeBinaries } from "../tools/kube-binaries.js";
import { parseFlags } from "./arguments.js";
import type { CommandContext } from "./main.js";

export const clusterFlags = {
  provider: { type: "string" },
  name: { type: "string" },
  "bin-dir": { type: "string" },
  "node-image": { type: "string" },
  kubeconfig: { type: "string" },
  context: { type: "string" },
  verbose: { type: "boolean" },
} as const;

/** How a command that starts a kwok cluster gets its binaries (auto, download, build). */
export const binariesFlag = { binaries: { type: "string" } } as const;

/**
 * The kwok cluster's binaries in its bin directory, the way `--binaries`
 * (or RECONCILE_CONFORMANCE_BINARIES) says; nothing for other providers.
 */
export async function prepareClusterBinaries(
  cluster: ClusterConfig,
  flag: string | undefined,
  context: CommandContext,
): Promise<void> {
  if (cluster.provider !== "kwok") return;
  const { env } = context.environment;
  await ensureKubeBinaries(cluster.binDir, binariesMode(flag, env, "--binaries"), {
    logger: context.logger,
    runner: context.runner,
    signal: context.signal,
    env,
  });
}

function settingsFrom(args: string[], command: string): ClusterSettings & { binaries?: string } {
  const flags = command === "cluster create" ? { ...clusterFlags, ...binariesFlag } : clusterFlags;
  const { values, positionals } = parseFlags(args, flags, command);
  if (positionals.length > 0) {
    throw new UsageError("cli/unexpected-argument", `${command}: unexpected argument "${positionals[0]}"`);
  }
  return {
    ...("binaries" in values && typeof values.binaries === "string" ? { binaries: values.binaries } : {}),
    provider: values.provider,
    name: values.name,
    binDir: values["bin-dir"],
    nodeImage: values["node-image"],
    kubeconfig: values.kubeconfig,
    context: values.context,
  };
}

/** `cluster create`: progress on stderr, the kubeconfig path as the last line of stdout. */
export async function clusterCreate(args: string[], context: CommandContext): Promise<ExitCode> {
  const settings = settingsFrom(args, "cluster create");
  const config = parseClusterConfig(settings, context.environment);
  await prepareClusterBinaries(config, settings.binaries, context);
  const provider = createProvider(config, context);
  const access = await provider.create({ signal: context.signal });
  // It outlives this process on purpose: the user's now, removed by `cluster delete`, no leftover for `clean`.
  await handOverCluster(config);
  context.logger.info(
    `cluster ready: provider ${access.provider}, context ${access.context}, API ${access.apiServerUrl}`,
  );
  context.stdout.write(`${access.kubeconfigPath}\n`);
  return ExitCode.ok;
}

/** `cluster delete`: stops what the kit created; refuses to touch an existing cluster. */
export async function clusterDelete(args: string[], context: CommandContext): Promise<ExitCode> {
  const config = parseClusterConfig(settingsFrom(args, "cluster delete"), context.environment);
  if (config.provider === "existing") {
    throw new UsageError(
      "cli/not-deletable",
      "cluster delete: provider existing names a cluster the kit did not create; it is never deleted",
    );
  }
  const outcome = await createProvider(config, context).delete();
  context.logger.info(
    outcome === "deleted"
      ? `cluster "${config.name}" deleted`
      : `no ${config.provider} cluster named "${config.name}": nothing to delete`,
  );
  return ExitCode.ok;
}
