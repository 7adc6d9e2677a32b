import * as core from "@actions/core";
import * as toolCache from "@actions/tool-cache";
import { createHash } from "node:crypto";
import { chmod, readFile } from "node:fs/promises";
import { defaultKubeBinDir, type ClusterEnvironment } from "../cluster/cluster-config.js";
import { InfrastructureError } from "../errors.js";
import { findExecutable, type CommandRunner } from "../process/command-runner.js";
import { ensureKubeBinaries } from "../tools/kube-binaries.js";
import type { Logger } from "../util/logger.js";
import type { ActionSettings } from "./inputs.js";

/** Where kind's release binaries are published; a mirror can be named for runners without that site. */
export const KIND_RELEASES = "https://github.com/kubernetes-sigs/kind/releases/download";

/**
 * The tools the run's cluster needs on the runner. kind: the one on PATH,
 * else the pinned release from the runner's tool cache, else downloaded,
 * checked against the checksum published beside it, and cached for the
 * next job on the runner.
 */
export async function ensureTools(
  settings: ActionSettings,
  deps: {
    readonly runner: CommandRunner;
    readonly logger: Logger;
    readonly environment: ClusterEnvironment;
    readonly signal: AbortSignal;
  },
): Promise<void> {
  if (settings.request.cluster.provider === "kwok") {
    await ensureKubeBinaries(
      settings.request.cluster.binDir ?? defaultKubeBinDir(deps.environment),
      settings.binaries,
      { ...deps, env: deps.environment.env },
    );
    return;
  }
  if (settings.request.cluster.provider !== "kind") return;
  const onPath = await findExecutable("kind");
  if (onPath) {
    deps.logger.info(`kind: ${onPath} (already on PATH)`);
    return;
  }
  const directory = await installKind(settings.kindVersion, {
    baseUrl: process.env.RECONCILE_CONFORMANCE_KIND_RELEASES || KIND_RELEASES,
    logger: deps.logger,
  });
  core.addPath(directory);
}

/** kind's name for this machine: kind-<os>-<arch>. */
export function kindAssetName(
  platform: NodeJS.Platform = process.platform,
  arch: string = process.arch,
): string {
  const os = platform === "win32" ? "windows" : platform;
  const cpu = arch === "x64" ? "amd64" : arch;
  if (!["linux", "darwin"].includes(os) || !["amd64", "arm64"].includes(cpu)) {
    throw new InfrastructureError(
      "tools/unsupported-platform",
      `kind: no release binary for ${platform}/${arch}: install kind yourself before this step`,
    );
  }
  return `kind-${os}-${cpu}`;
}

/**
 * Installs kind `version` into the runner's tool cache (RUNNER_TOOL_CACHE)
 * and returns the directory that holds the `kind` binary. A download whose
 * SHA-256 differs from the published `<asset>.sha256sum` is refused.
 */
export async function installKind(
  version: string,
  options: { readonly baseUrl: string; readonly logger: Logger; readonly asset?: string },
): Promise<string> {
  const semver = version.replace(/^v/, "");
  const cached = toolCache.find("kind", semver);
  if (cached) {
    options.logger.info(`kind ${version}: from the runner's tool cache (${cached})`);
    return cached;
  }
  const asset = options.asset ?? kindAssetName();
  const url = `${options.baseUrl.replace(/\/$/, "")}/${version}/${asset}`;
  options.logger.info(`kind ${version}: downloading ${url}`);
  const binary = await download(url, "kind");
  const sums = await readFile(await download(`${url}.sha256sum`, "kind's checksum"), "utf8");
  const expected = /^([0-9a-f]{64})\b/m.exec(sums)?.[1];
  if (!expected) {
    throw new InfrastructureError(
      "tools/bad-checksum-file",
      `kind ${version}: ${url}.sha256sum does not hold a SHA-256 checksum`,
    );
  }
  const actual = createHash("sha256")
    .update(await readFile(binary))
    .digest("hex");
  if (actual !== expected) {
    throw new InfrastructureError(
      "tools/checksum-mismatch",
      `kind ${version}: the download from ${url} has SHA-256 ${actual}, but the release publishes ${expected}: refusing to run it`,
    );
  }
  await chmod(binary, 0o755);
  const directory = await toolCache.cacheFile(binary, "kind", "kind", semver);
  options.logger.info(`kind ${version}: checksum ${actual} verified; cached in ${directory}`);
  return directory;
}

async function download(url: string, what: string): Promise<string> {
  try {
    return await toolCache.downloadTool(url);
  } catch (error) {
    throw new InfrastructureError(
      "tools/download-failed",
      `${what}: could not download ${url}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
