/*
 * The download of the pinned release binaries into a bin directory: the
 * plan for this machine, the files fetched and verified side by side into
 * a staging directory, the stamp written, and the staging directory put
 * in the bin directory's place in one rename. Where the releases come
 * from: docs/design/release-binaries.md.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { AbortedError, describeError, InfrastructureError } from "../errors.js";
import { isProcessAlive } from "../process/process-table.js";
import { Limiter } from "../util/limiter.js";
import type { Logger } from "../util/logger.js";
import { currentReleasePlatform, releaseFiles, releasePlatform } from "./download-plan.js";
import {
  DOWNLOADS_SUBDIR,
  fetchVerified,
  formatBytes,
  seconds,
  type DownloadSession,
} from "./release-download.js";
import { ReleaseErrorCode } from "./release-error-codes.js";
import { PINNED_RELEASES, type ReleaseBaseUrls, type ReleaseVersions } from "./release-pins.js";
import { RELEASE_STAMP_FILE, type ReleaseStamp, type StampedFile } from "./release-stamp.js";

/** Options of downloadKubeBinaries; everything but the logger has a default. */
export interface DownloadKubeBinariesOptions {
  /** Progress, with sizes: one line per file started and finished, and every 10 s while one is running. */
  readonly logger: Logger;
  /** Default: this machine (currentReleasePlatform). */
  readonly platform?: { readonly os: string; readonly arch: string };
  /** Default: PINNED_RELEASES. */
  readonly versions?: Partial<ReleaseVersions>;
  /** Default: DEFAULT_BASE_URLS. */
  readonly baseUrls?: Partial<ReleaseBaseUrls>;
  /** Sent to the GitHub API only; raises its limit of 60 unauthenticated requests an hour (e.g. GITHUB_TOKEN). */
  readonly githubToken?: string;
  /** Stops the downloads; nothing is left behind. */
  readonly signal?: AbortSignal;
  /** A request without an answer, or a download that receives nothing, for this long is abandoned. Default 30 000. */
  readonly idleTimeoutMs?: number;
  /** Files downloaded at once. Default 3. */
  readonly concurrency?: number;
}

export interface DownloadResult {
  readonly binDir: string;
  readonly stamp: ReleaseStamp;
}

const STAGING_INFIX = ".download-";
const REPLACED_INFIX = ".replaced-";

/**
 * Downloads the pinned release binaries for this machine into `binDir`:
 * each file's SHA-256 is checked against the one its publisher published
 * before it is used, etcd is taken out of its archive, and everything is
 * assembled in a staging directory beside `binDir` that replaces `binDir`
 * in one rename, so a failed or interrupted download never leaves a
 * half-filled or unverified bin directory (an existing one stays as it was).
 * Errors are InfrastructureErrors with a ReleaseErrorCode; `unreachable`
 * means the network is not there, and the Go build is the way out.
 */
export async function downloadKubeBinaries(
  binDir: string,
  options: DownloadKubeBinariesOptions,
): Promise<DownloadResult> {
  const { logger, signal } = options;
  const platform = options.platform
    ? releasePlatform(options.platform.os, options.platform.arch)
    : currentReleasePlatform();
  const versions: ReleaseVersions = { ...PINNED_RELEASES, ...options.versions };
  const files = releaseFiles({ ...platform, ...versions, baseUrls: options.baseUrls });
  const idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
  if (signal?.aborted) throw new AbortedError("kube binaries: download aborted");

  const parent = dirname(binDir);
  await removeAbandonedStaging(binDir, logger);
  const staging = join(
    parent,
    `${basename(binDir)}${STAGING_INFIX}${process.pid}-${randomBytes(4).toString("hex")}`,
  );
  try {
    await mkdir(join(staging, DOWNLOADS_SUBDIR), { recursive: true });
  } catch (error) {
    throw new InfrastructureError(
      ReleaseErrorCode.installFailed,
      `kube binaries: cannot create ${staging}: ${describeError(error)}`,
      [],
      { cause: error },
    );
  }

  // The first real failure ends the other downloads at once; theirs would only be "cancelled".
  const cancelOthers = new AbortController();
  let firstFailure: unknown;
  const session: DownloadSession = {
    logger,
    idleTimeoutMs,
    signal: signal ? AbortSignal.any([signal, cancelOthers.signal]) : cancelOthers.signal,
    userSignal: signal,
    githubToken: options.githubToken,
    publishedTexts: new Map(),
  };
  const started = Date.now();
  logger.info(
    `kube binaries: downloading ${files.length} release files for ${platform.os}/${platform.arch} ` +
      `(Kubernetes ${versions.kubeVersion}, etcd ${versions.etcdVersion}, kwok ${versions.kwokVersion}) into ${binDir}`,
  );
  let installed = false;
  try {
    let stamped: StampedFile[];
    try {
      stamped = await new Limiter(options.concurrency ?? 3).map(files, async (file) => {
        try {
          return await fetchVerified(file, staging, session);
        } catch (error) {
          firstFailure ??= error;
          cancelOthers.abort();
          throw error;
        }
      });
    } catch (error) {
      throw firstFailure ?? error;
    }
    const stamp: ReleaseStamp = {
      apiVersion: "reconcile-conformance.dev/release-binaries/v1",
      platform: `${platform.os}/${platform.arch}`,
      versions,
      downloadedAt: new Date().toISOString(),
      files: stamped,
    };
    await rm(join(staging, DOWNLOADS_SUBDIR), { recursive: true, force: true });
    await writeFile(join(staging, RELEASE_STAMP_FILE), `${JSON.stringify(stamp, null, 2)}\n`);
    if (signal?.aborted) throw new AbortedError("kube binaries: download aborted");
    await replaceDirectory(staging, binDir);
    installed = true;
    const total = stamped.reduce((sum, file) => sum + file.bytes, 0);
    logger.info(
      `kube binaries: ${formatBytes(total)} downloaded and verified in ${seconds(Date.now() - started)}; ready in ${binDir}`,
    );
    return { binDir, stamp };
  } finally {
    if (!installed) await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Puts `staging` where `binDir` is, replacing what was there. rename(2)
 * onto an existing non-empty directory fails, so the old one is moved
 * aside first; between the two renames `binDir` is briefly absent, never
 * half-filled. A running cluster keeps its binaries: processes hold their
 * executables open.
 */
async function replaceDirectory(staging: string, binDir: string): Promise<void> {
  const retired: string[] = [];
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await rename(staging, binDir);
        return;
      } catch (error) {
        if (!hasCode(error, "ENOTEMPTY", "EEXIST") || attempt >= 3) throw error;
      }
      const aside = `${binDir}${REPLACED_INFIX}${process.pid}-${randomBytes(4).toString("hex")}`;
      try {
        await rename(binDir, aside);
        retired.push(aside);
      } catch (error) {
        // Another download moved it first: try again.
        if (!hasCode(error, "ENOENT")) throw error;
      }
    }
  } catch (error) {
    throw new InfrastructureError(
      ReleaseErrorCode.installFailed,
      `kube binaries: cannot move the verified files from ${staging} to ${binDir}: ${describeError(error)}`,
      [],
      { cause: error },
    );
  } finally {
    for (const old of retired) await rm(old, { recursive: true, force: true });
  }
}

/**
 * Staging and set-aside directories of downloads whose process died
 * (SIGKILL, power loss): nobody else would remove them. Their names carry
 * the pid of the process that made them.
 */
async function removeAbandonedStaging(binDir: string, logger: Logger): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dirname(binDir));
  } catch {
    return;
  }
  for (const entry of entries) {
    const prefix = [STAGING_INFIX, REPLACED_INFIX]
      .map((infix) => `${basename(binDir)}${infix}`)
      .find((candidate) => entry.startsWith(candidate));
    if (!prefix) continue;
    const pid = Number(entry.slice(prefix.length).split("-")[0]);
    if (!Number.isInteger(pid) || pid <= 0 || isProcessAlive(pid)) continue;
    logger.info(`kube binaries: removing ${entry}, left by an interrupted download (pid ${pid})`);
    await rm(join(dirname(binDir), entry), { recursive: true, force: true });
  }
}

function hasCode(error: unknown, ...codes: string[]): boolean {
  return (
    typeof error === "object" &&
    error !== null &&
    "code" in error &&
    typeof error.code === "string" &&
    codes.includes(error.code)
  );
}
