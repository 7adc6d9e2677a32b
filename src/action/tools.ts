import * as core from "@actions/core";
import * as toolCache from "@actions/tool-cache";
import { createHash } from "node:crypto";
import { chmod, readFile } from "node:fs/promises";
import { join } from "node:path";
import { defaultKubeBinDir, type ClusterEnvironment } from "../cluster/cluster-config.js";
import { InfrastructureError } from "../errors.js";
import { findExecutable, type CommandRunner } from "../process/command-runner.js";
import { downloadKubeBinaries, ReleaseErrorCode } from "../tools/release-binaries.js";
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
    await ensureKubeBinaries(defaultKubeBinDir(deps.environment), deps);
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

/** The binaries a kwok cluster runs (as hack/kube-binaries/build.sh and a download lay them out). */
const KUBE_BINARIES = [
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kubectl",
  "etcd",
  "kwok",
  "kwokctl",
];

/**
 * The kwok cluster's binaries on the runner: those in `binDir` when all are
 * there (built from Go modules, or downloaded by an earlier job and restored
 * from a cache), else the pinned official releases, downloaded and checked
 * against their published checksums. A runner without the internet gets an
 * error that says how to build them instead.
 */
export async function ensureKubeBinaries(
  binDir: string,
  deps: { readonly logger: Logger; readonly signal: AbortSignal },
): Promise<void> {
  const present = await Promise.all(KUBE_BINARIES.map((name) => findExecutable(join(binDir, name))));
  if (present.every(Boolean)) {
    deps.logger.info(`kube binaries: ${binDir}`);
    return;
  }
  try {
    await downloadKubeBinaries(binDir, {
      logger: deps.logger,
      signal: deps.signal,
      ...(process.env.GITHUB_TOKEN ? { githubToken: process.env.GITHUB_TOKEN } : {}),
    });
  } catch (error) {
    if (error instanceof InfrastructureError && error.code === ReleaseErrorCode.unreachable) {
      throw new InfrastructureError(
        "tools/kube-binaries-unreachable",
        `${error.message}: without the internet, build them from Go modules first (hack/kube-binaries/build.sh in the action's repository, into ${binDir})`,
        error.details,
        { cause: error },
      );
    }
    throw error;
  }
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
