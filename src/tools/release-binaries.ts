/*
 * The pinned official release files of the kwok provider's binaries, and a
 * downloader that verifies them before they reach the bin directory. On a
 * machine with internet this replaces hack/kube-binaries/build.sh (about 13
 * minutes and a Go toolchain on 2 cores) with a download of the same
 * releases into the same directory layout.
 *
 * What the publishers release, and where that was read (each repository at
 * the commit named; paths and lines as they are there):
 *
 * Kubernetes (dl.k8s.io), kubernetes/release @ f618b2a308bc:
 * - pkg/consts/main.go:73: the download base is https://dl.k8s.io/release.
 * - pkg/release/release.go:262-305 (CopyBinaries): plain binaries are staged
 *   as bin/<os>/<arch>/<name>, from the *server* package where one exists
 *   for the platform, else from the client package; pkg/build/push.go:338-365
 *   stages them and then calls WriteChecksums.
 * - pkg/release/release.go:331-418 (WriteChecksums): every staged file gets a
 *   `<file>.sha256` holding only the lowercase hex digest (no file name, no
 *   newline: os.WriteFile(shaFileName, []byte(sha)) at :418); the release
 *   root also gets SHA256SUMS ("<hex>  <path>" lines, :353).
 * - Server binaries are built for Linux only: KUBE_SUPPORTED_SERVER_PLATFORMS
 *   in kubernetes/kubernetes hack/lib/golang.sh lists only linux/* (seen in
 *   stored copies of that file; the newest commit could not be fetched here,
 *   the repository is over the snapshot limit), and kwok says the same in
 *   kubernetes-sigs/kwok v0.8.0 pkg/config/vars.go:277-283 ("No provided for
 *   control plane components outside of Linux, but kubectl is an exception").
 *   So darwin gets kubectl from dl.k8s.io and the control plane elsewhere.
 *
 * Unofficial darwin control plane, kwok-ci/k8s @ 9a34c333673b:
 * - kwokctl's own default on non-Linux (kwok v0.8.0 pkg/consts/consts.go:39,
 *   pkg/config/vars.go:283): https://github.com/kwok-ci/k8s/releases/download/
 *   <kube version>-kwok.0-<os>-<arch>/<name>.
 * - .github/workflows/build.yaml:23-26,59,66-67: one GitHub release per
 *   platform, tagged <kube version>-kwok.<build>-<os>-<arch>, whose assets are
 *   the files of _output/local/bin/<os>/<arch>/ (kube-apiserver,
 *   kube-controller-manager, kube-scheduler, kubectl), built with CGO off and
 *   KUBE_GIT_VERSION=<kube version>-kwok.0, so they report that version.
 * - No checksum file is published. NOT CONFIRMED: that a release exists for
 *   v1.35.4 (the workflow builds every Kubernetes release daily,
 *   .github/workflows/schedule.yaml; the release list itself is not readable
 *   offline). These binaries are "UNOFFICIAL ... for development and testing
 *   purposes only" (README.md).
 *
 * etcd, etcd-io/etcd release-3.6 @ b622889a5a51 (the stored snapshot's newest
 * 3.6 tag is v3.6.14; that v3.6.16 has GitHub release assets is NOT CONFIRMED
 * offline, only that it is a published Go module):
 * - scripts/build-binary.sh:42-44,88-98: each platform is packed as
 *   etcd-<v>-<os>-<arch>/{etcd,etcdctl,etcdutl,README*.md,Documentation},
 *   `tar cfz etcd-<v>-linux-<arch>.tar.gz` on Linux and
 *   `zip -qr etcd-<v>-<os>-<arch>.zip` elsewhere (darwin amd64 and arm64, :77-79).
 * - scripts/release.sh:242-246: SHA256SUMS = `shasum -a 256` of every .tar.gz
 *   and .zip ("<hex>  <file name>" lines); :388-391 uploads the archives and
 *   SHA256SUMS to the GitHub release; scripts/release_notes.tpl.txt gives the
 *   download base https://github.com/etcd-io/etcd/releases/download/<v>/.
 * - kwok v0.8.0 pkg/config/vars.go:375-397 downloads the same names and takes
 *   the `etcd` member out of them.
 *
 * kwok and kwokctl, kubernetes-sigs/kwok v0.8.0 @ 156033d7df7e:
 * - .github/workflows/releases.yaml:36-53 runs `make manifests cross-build`
 *   on a tag; Makefile:77 BINARY_PLATFORMS = linux/{amd64,arm64},
 *   darwin/{amd64,arm64}, windows/{amd64,arm64}; Makefile:146-161 calls
 *   hack/releases.sh, which (:177-212) uploads each binary to the GitHub
 *   release as <binary>-<os>-<arch> (".exe" added on windows, :201-204) with
 *   `gh release upload` (:206).
 * - No checksum file is published: nothing in releases.sh, the Makefile or
 *   the workflow writes one, and `git grep` of the v0.8.0 tree for
 *   sha256sum / SHA256SUMS / checksums.txt finds nothing. pkg/config/vars.go:345
 *   (kwokctl's own download of kwok) uses the same asset name, unverified.
 *
 * Where no checksum file exists (kwok, kwokctl, kwok-ci's darwin builds),
 * the digest GitHub itself records for every release asset is used: the
 * REST API's release record lists each asset with `digest: "sha256:<hex>"`,
 * computed by GitHub when the asset was uploaded (GitHub changelog
 * 2025-06-03 "Releases now expose digests for release assets"; go-github
 * PR #3628). That digest proves the file is the one the project uploaded,
 * as a checksum file would; it is fetched from api.github.com, whose
 * unauthenticated limit is 60 requests an hour per address (a download makes
 * one request on Linux, kwok's release, and two on darwin, kwok-ci's too).
 */
import { createHash, randomBytes } from "node:crypto";
import { chmod, mkdir, open, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { crc32, gunzipSync, inflateRawSync } from "node:zlib";
import { KUBE_VERSION } from "../cluster/cluster-config.js";
import { AbortedError, describeError, InfrastructureError, UsageError } from "../errors.js";
import { isProcessAlive } from "../process/process-table.js";
import { Limiter } from "../util/limiter.js";
import type { Logger } from "../util/logger.js";
import { isRecord } from "../util/records.js";
import { VERSION } from "../version.js";

/** The releases hack/kube-binaries/build.sh builds; a unit test keeps these equal to its go.mod files. */
export const PINNED_RELEASES: ReleaseVersions = {
  kubeVersion: KUBE_VERSION,
  etcdVersion: "v3.6.16",
  kwokVersion: "v0.8.0",
};

export interface ReleaseVersions {
  /** Kubernetes, e.g. `v1.35.4`. */
  readonly kubeVersion: string;
  /** etcd, e.g. `v3.6.16`. */
  readonly etcdVersion: string;
  /** kwok and kwokctl, e.g. `v0.8.0`. */
  readonly kwokVersion: string;
}

/** Where the files come from. Each can point at a mirror that keeps the same paths below it. */
export interface ReleaseBaseUrls {
  /** Kubernetes' release tree: `<base>/<version>/bin/<os>/<arch>/<name>`. Default https://dl.k8s.io/release. */
  readonly kubernetes: string;
  /** GitHub release downloads: `<base>/<owner>/<repo>/releases/download/<tag>/<asset>`. Default https://github.com. */
  readonly githubReleases: string;
  /** GitHub's REST API, for the digests of release assets. Default https://api.github.com. */
  readonly githubApi: string;
}

export const DEFAULT_BASE_URLS: ReleaseBaseUrls = {
  kubernetes: "https://dl.k8s.io/release",
  githubReleases: "https://github.com",
  githubApi: "https://api.github.com",
};

export type ReleaseOs = "linux" | "darwin";
export type ReleaseArch = "amd64" | "arm64";

/** A platform in Go's names, the ones every release here uses. */
export interface ReleasePlatform {
  readonly os: ReleaseOs;
  readonly arch: ReleaseArch;
}

/**
 * Where the expected SHA-256 of a file is published:
 * - `sha256-file`: a file holding the file's digest (dl.k8s.io's `<file>.sha256`);
 * - `sha256sums`: `<hex>  <name>` lines, one per file (etcd's SHA256SUMS); `entry` is the name to look for;
 * - `github-release-digest`: the GitHub API's record of a release; `asset` is the asset whose `digest` to read.
 */
export type ReleaseChecksum =
  | { readonly format: "sha256-file"; readonly url: string }
  | { readonly format: "sha256sums"; readonly url: string; readonly entry: string }
  | { readonly format: "github-release-digest"; readonly url: string; readonly asset: string };

/** One file to fetch for the bin directory. */
export interface ReleaseFile {
  /** Its name in the bin directory (one of the kwok provider's KWOK_BINARIES). */
  readonly name: string;
  /** Who publishes it, for messages and the stamp: `kubernetes v1.35.4`. */
  readonly source: string;
  readonly url: string;
  readonly checksum: ReleaseChecksum;
  /** Set when `url` is an archive: the checksum covers the archive, `member` is the path of the binary in it. */
  readonly extract?: { readonly archive: "tar.gz" | "zip"; readonly member: string };
}

export interface ReleaseFilesRequest extends ReleaseVersions {
  /** Go's GOOS: `linux` or `darwin`. */
  readonly os: string;
  /** Go's GOARCH: `amd64` or `arm64`. */
  readonly arch: string;
  /** Defaults from DEFAULT_BASE_URLS for any left out. */
  readonly baseUrls?: Partial<ReleaseBaseUrls>;
}

/** kwok-ci's build number for a Kubernetes version; kwokctl v0.8.0 asks for `.0` too (pkg/config/vars.go:283). */
const KWOK_CI_BUILD = "kwok.0";

/** Stable codes of the errors this module raises, so a caller can react to each (fall back to the Go build). */
export const ReleaseErrorCode = {
  /** No connection: DNS failed, connection refused or reset, or no answer before the idle timeout. */
  unreachable: "kube-binaries/unreachable",
  /** The server answered with a status other than 2xx (after redirects). */
  httpStatus: "kube-binaries/http-status",
  /** The file's SHA-256 differs from the published one. */
  checksumMismatch: "kube-binaries/checksum-mismatch",
  /** The checksum source has no well-formed digest for the file. */
  checksumMissing: "kube-binaries/checksum-missing",
  /** The connection broke or stalled during the download. */
  downloadFailed: "kube-binaries/download-failed",
  /** The verified archive does not hold the binary, or is damaged. */
  extractFailed: "kube-binaries/extract-failed",
  /** No release is published for this OS or architecture. */
  unsupportedPlatform: "kube-binaries/unsupported-platform",
  /** Writing into the bin directory's parent failed. */
  installFailed: "kube-binaries/install-failed",
} as const;

const SUPPORTED_OS: readonly ReleaseOs[] = ["linux", "darwin"];
const SUPPORTED_ARCH: readonly ReleaseArch[] = ["amd64", "arm64"];

/** Go's name for this machine, or an unsupported-platform error. */
export function currentReleasePlatform(
  platform: NodeJS.Platform = process.platform,
  arch: string = process.arch,
): ReleasePlatform {
  const goArch = arch === "x64" ? "amd64" : arch;
  return releasePlatform(platform, goArch);
}

function releasePlatform(os: string, arch: string): ReleasePlatform {
  const knownOs = SUPPORTED_OS.find((candidate) => candidate === os);
  const knownArch = SUPPORTED_ARCH.find((candidate) => candidate === arch);
  if (!knownOs || !knownArch) {
    throw new InfrastructureError(
      ReleaseErrorCode.unsupportedPlatform,
      `kube binaries: no release binaries for ${os}/${arch}; downloads exist for ` +
        `${SUPPORTED_OS.join(", ")} on ${SUPPORTED_ARCH.join(", ")}. Build them with hack/kube-binaries/build.sh instead.`,
    );
  }
  return { os: knownOs, arch: knownArch };
}

const VERSION_PATTERN = /^v\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/;

/**
 * The files that make up a kwok bin directory for one platform, at the
 * given versions: pure, so the URL scheme of each publisher is tested
 * without a network. See the comment at the top of this file for where
 * each name comes from.
 */
export function releaseFiles(request: ReleaseFilesRequest): ReleaseFile[] {
  const { os, arch } = releasePlatform(request.os, request.arch);
  for (const [field, value] of Object.entries({
    kubeVersion: request.kubeVersion,
    etcdVersion: request.etcdVersion,
    kwokVersion: request.kwokVersion,
  })) {
    if (!VERSION_PATTERN.test(value)) {
      throw new UsageError(
        "kube-binaries/invalid-version",
        `kube binaries: ${field} "${value}": expected vX.Y.Z`,
      );
    }
  }
  const base = resolveBaseUrls(request.baseUrls);
  const { kubeVersion, etcdVersion, kwokVersion } = request;
  const github = (repo: string, tag: string, asset: string) =>
    `${base.githubReleases}/${repo}/releases/download/${tag}/${asset}`;
  const githubDigest = (repo: string, tag: string, asset: string): ReleaseChecksum => ({
    format: "github-release-digest",
    url: `${base.githubApi}/repos/${repo}/releases/tags/${tag}`,
    asset,
  });

  const kubernetes = (name: string): ReleaseFile => {
    const url = `${base.kubernetes}/${kubeVersion}/bin/${os}/${arch}/${name}`;
    return {
      name,
      source: `kubernetes ${kubeVersion}`,
      url,
      checksum: { format: "sha256-file", url: `${url}.sha256` },
    };
  };
  // dl.k8s.io has no server binaries for darwin; kwokctl takes them from kwok-ci's builds, and so do we.
  const controlPlane = (name: string): ReleaseFile => {
    if (os === "linux") return kubernetes(name);
    const tag = `${kubeVersion}-${KWOK_CI_BUILD}-${os}-${arch}`;
    return {
      name,
      source: `kwok-ci/k8s ${tag} (unofficial build)`,
      url: github("kwok-ci/k8s", tag, name),
      checksum: githubDigest("kwok-ci/k8s", tag, name),
    };
  };
  const etcdDir = `etcd-${etcdVersion}-${os}-${arch}`;
  const etcdArchive = os === "linux" ? "tar.gz" : "zip";
  const etcdAsset = `${etcdDir}.${etcdArchive}`;
  const kwok = (name: string): ReleaseFile => {
    const asset = `${name}-${os}-${arch}`;
    return {
      name,
      source: `kwok ${kwokVersion}`,
      url: github("kubernetes-sigs/kwok", kwokVersion, asset),
      checksum: githubDigest("kubernetes-sigs/kwok", kwokVersion, asset),
    };
  };

  return [
    controlPlane("kube-apiserver"),
    controlPlane("kube-controller-manager"),
    controlPlane("kube-scheduler"),
    kubernetes("kubectl"),
    {
      name: "etcd",
      source: `etcd ${etcdVersion}`,
      url: github("etcd-io/etcd", etcdVersion, etcdAsset),
      checksum: {
        format: "sha256sums",
        url: github("etcd-io/etcd", etcdVersion, "SHA256SUMS"),
        entry: etcdAsset,
      },
      extract: { archive: etcdArchive, member: `${etcdDir}/etcd` },
    },
    kwok("kwok"),
    kwok("kwokctl"),
  ];
}

function resolveBaseUrls(overrides: Partial<ReleaseBaseUrls> = {}): ReleaseBaseUrls {
  const resolved = { ...DEFAULT_BASE_URLS };
  for (const key of ["kubernetes", "githubReleases", "githubApi"] as const) {
    const value = overrides[key];
    if (value === undefined) continue;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new UsageError(
        "kube-binaries/invalid-base-url",
        `kube binaries: base URL ${key} "${value}" is not a URL`,
      );
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      throw new UsageError(
        "kube-binaries/invalid-base-url",
        `kube binaries: base URL ${key} "${value}": expected http:// or https://`,
      );
    }
    resolved[key] = value.replace(/\/+$/, "");
  }
  return resolved;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * The expected SHA-256 (lowercase hex) of `file`, read from the text its
 * checksum source published. Pure, so each publisher's format is tested on
 * its own.
 */
export function publishedSha256(file: ReleaseFile, published: string): string {
  const { checksum } = file;
  const missing = (why: string) =>
    new InfrastructureError(
      ReleaseErrorCode.checksumMissing,
      `kube binaries: ${file.name}: no SHA-256 for ${file.url} in ${checksum.url}: ${why}`,
    );
  switch (checksum.format) {
    case "sha256-file": {
      // The file holds the bare digest; tolerate `<hex>  <name>` as sha256sum writes it.
      const digest = published.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
      if (!SHA256_HEX.test(digest)) throw missing("it does not start with a SHA-256 digest");
      return digest;
    }
    case "sha256sums": {
      for (const line of published.split("\n")) {
        // "<hex>  <name>" in text mode, "<hex> *<name>" in binary mode.
        const match = /^([0-9a-fA-F]{64}) [ *](?:\.\/)?(.+?)\s*$/.exec(line);
        if (match?.[2] === checksum.entry && match[1]) return match[1].toLowerCase();
      }
      throw missing(`no line for ${checksum.entry}`);
    }
    case "github-release-digest": {
      let release: unknown;
      try {
        release = JSON.parse(published);
      } catch {
        throw missing("the answer is not JSON");
      }
      const assets = isRecord(release) && Array.isArray(release.assets) ? release.assets : [];
      const asset: unknown = assets.find(
        (candidate) => isRecord(candidate) && candidate.name === checksum.asset,
      );
      if (!isRecord(asset)) throw missing(`the release has no asset named ${checksum.asset}`);
      const digest = typeof asset.digest === "string" ? asset.digest : "";
      const hex = /^sha256:([0-9a-fA-F]{64})$/.exec(digest)?.[1];
      if (!hex)
        throw missing(
          `asset ${checksum.asset} has no sha256 digest (digest: ${JSON.stringify(asset.digest)})`,
        );
      return hex.toLowerCase();
    }
  }
}

/** Node's error codes that mean the host was never reached, as opposed to a transfer that broke. */
const UNREACHABLE_CODES = new Set([
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_FAIL",
  "EAI_NONAME",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * Why a fetch that produced no response never reached its host (e.g.
 * `ECONNREFUSED`), or undefined when it failed for another reason. fetch
 * throws "fetch failed" with the socket's error as its cause, and when
 * several addresses were tried, an AggregateError of them.
 */
export function unreachableReason(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0) {
    const current = pending.shift();
    if (current === undefined || current === null || seen.has(current)) continue;
    seen.add(current);
    if (typeof current !== "object") continue;
    if ("code" in current && typeof current.code === "string" && UNREACHABLE_CODES.has(current.code)) {
      return current.code;
    }
    if ("cause" in current) pending.push(current.cause);
    if (current instanceof AggregateError) {
      const errors: unknown[] = current.errors;
      pending.push(...errors);
    }
  }
  return undefined;
}

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

/** The stamp file in the bin directory: what was downloaded and what it hashed to. */
export const RELEASE_STAMP_FILE = ".release-stamp.json";

export interface ReleaseStamp {
  readonly apiVersion: "reconcile-conformance.dev/release-binaries/v1";
  /** `<os>/<arch>` */
  readonly platform: string;
  readonly versions: ReleaseVersions;
  readonly downloadedAt: string;
  readonly files: readonly StampedFile[];
}

export interface StampedFile {
  readonly name: string;
  readonly source: string;
  readonly url: string;
  readonly checksumUrl: string;
  /** SHA-256 of what was downloaded (the archive, for etcd), equal to the published one. */
  readonly sha256: string;
  readonly bytes: number;
  /** For a binary taken out of an archive: its path there and its own SHA-256. */
  readonly member?: string;
  readonly binarySha256?: string;
}

export interface DownloadResult {
  readonly binDir: string;
  readonly stamp: ReleaseStamp;
}

/** Reads the stamp a download left in `binDir`; undefined when there is none or it is unreadable. */
export async function readReleaseStamp(binDir: string): Promise<ReleaseStamp | undefined> {
  try {
    const parsed: unknown = JSON.parse(await readFile(join(binDir, RELEASE_STAMP_FILE), "utf8"));
    if (!isReleaseStamp(parsed)) return undefined;
    return parsed;
  } catch {
    return undefined;
  }
}

function isReleaseStamp(value: unknown): value is ReleaseStamp {
  return (
    isRecord(value) &&
    value.apiVersion === "reconcile-conformance.dev/release-binaries/v1" &&
    typeof value.platform === "string" &&
    isRecord(value.versions) &&
    Array.isArray(value.files)
  );
}

const STAGING_INFIX = ".download-";
const REPLACED_INFIX = ".replaced-";
const DOWNLOADS_SUBDIR = ".downloads";
const PROGRESS_INTERVAL_MS = 10_000;

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

interface DownloadSession {
  readonly logger: Logger;
  readonly idleTimeoutMs: number;
  /** Fires when the caller aborts or another file failed. */
  readonly signal: AbortSignal;
  /** The caller's own signal: an abort from it is an AbortedError, not a network failure. */
  readonly userSignal: AbortSignal | undefined;
  readonly githubToken: string | undefined;
  /** Checksum sources by URL: kwok and kwokctl share one release record. */
  readonly publishedTexts: Map<string, Promise<string>>;
}

/** Downloads one file into `staging`, checks it, and leaves the binary at `staging/<name>`, executable. */
async function fetchVerified(
  file: ReleaseFile,
  staging: string,
  session: DownloadSession,
): Promise<StampedFile> {
  if (session.signal.aborted) throw cancelled(session);
  // The published digest first: no point fetching 100 MB that cannot be verified.
  const expected = publishedSha256(file, await publishedText(file.checksum, session));
  const download = join(staging, DOWNLOADS_SUBDIR, basename(new URL(file.url).pathname));
  const { sha256, bytes } = await fetchToFile(file, download, session);
  if (sha256 !== expected) {
    throw new InfrastructureError(
      ReleaseErrorCode.checksumMismatch,
      `kube binaries: ${file.name}: the download from ${file.url} has SHA-256 ${sha256}, ` +
        `but ${file.checksum.url} publishes ${expected}: refusing it`,
    );
  }
  const target = join(staging, file.name);
  const stamped: StampedFile = {
    name: file.name,
    source: file.source,
    url: file.url,
    checksumUrl: file.checksum.url,
    sha256,
    bytes,
  };
  if (file.extract) {
    const archive = await readFile(download);
    let binary: Buffer;
    try {
      binary =
        file.extract.archive === "tar.gz"
          ? readTarGzMember(archive, file.extract.member)
          : readZipMember(archive, file.extract.member);
    } catch (error) {
      throw new InfrastructureError(
        ReleaseErrorCode.extractFailed,
        `kube binaries: ${file.name}: cannot take ${file.extract.member} out of ${file.url} (its checksum matched): ${describeError(error)}`,
        [],
        { cause: error },
      );
    }
    await writeFile(target, binary, { mode: 0o755 });
    await rm(download, { force: true });
    await chmod(target, 0o755);
    return {
      ...stamped,
      member: file.extract.member,
      binarySha256: createHash("sha256").update(binary).digest("hex"),
    };
  }
  await rename(download, target);
  await chmod(target, 0o755);
  return stamped;
}

/** A checksum source's text, fetched once per URL per download. */
function publishedText(checksum: ReleaseChecksum, session: DownloadSession): Promise<string> {
  let text = session.publishedTexts.get(checksum.url);
  if (!text) {
    text = fetchText(checksum, session);
    session.publishedTexts.set(checksum.url, text);
  }
  return text;
}

async function fetchText(checksum: ReleaseChecksum, session: DownloadSession): Promise<string> {
  const what = `checksum source ${checksum.url}`;
  const { response, idle } = await openUrl(
    checksum.url,
    what,
    session,
    checksum.format === "github-release-digest",
  );
  try {
    return await response.text();
  } catch (error) {
    throw transferFailure(checksum.url, what, error, idle, session, "transfer");
  } finally {
    idle.stop();
  }
}

/** Streams a download into `path`, hashing it on the way; logs sizes as it goes. */
async function fetchToFile(
  file: ReleaseFile,
  path: string,
  session: DownloadSession,
): Promise<{ sha256: string; bytes: number }> {
  const { logger } = session;
  const started = Date.now();
  const { response, idle } = await openUrl(file.url, file.name, session, false);
  const declared = Number(response.headers.get("content-length") ?? NaN);
  const size = Number.isFinite(declared) ? formatBytes(declared) : "size unknown";
  logger.info(`kube binaries: ${file.name}: downloading ${size} from ${file.url}`);
  const hash = createHash("sha256");
  let bytes = 0;
  let lastProgress = started;
  const handle = await open(path, "w");
  try {
    const reader = response.body?.getReader();
    if (!reader) throw new Error("the response has no body");
    for (;;) {
      const chunk = await readChunk(reader);
      if (chunk.done) break;
      idle.touch();
      hash.update(chunk.value);
      bytes += chunk.value.length;
      await handle.write(chunk.value);
      if (Date.now() - lastProgress >= PROGRESS_INTERVAL_MS) {
        lastProgress = Date.now();
        logger.info(`kube binaries: ${file.name}: ${formatBytes(bytes)} of ${size}`);
      }
    }
  } catch (error) {
    throw transferFailure(file.url, file.name, error, idle, session, "transfer");
  } finally {
    idle.stop();
    await handle.close();
  }
  const sha256 = hash.digest("hex");
  logger.info(`kube binaries: ${file.name}: ${formatBytes(bytes)} in ${seconds(Date.now() - started)}`);
  return { sha256, bytes };
}

/** One chunk of a fetch body, checked to be bytes (the DOM types leave it `any`). */
async function readChunk(
  reader: ReadableStreamDefaultReader<unknown>,
): Promise<{ done: true } | { done: false; value: Uint8Array }> {
  const result = await reader.read();
  if (result.done) return { done: true };
  const value: unknown = result.value;
  if (!(value instanceof Uint8Array)) throw new Error("the response body is not a byte stream");
  return { done: false, value };
}

/** Gives up on a request or a body when nothing arrives for `timeoutMs`. */
class IdleWatch {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  timedOut = false;

  constructor(readonly timeoutMs: number) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(new Error(`nothing received for ${timeoutMs} ms`));
    }, timeoutMs);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  touch(): void {
    this.timer.refresh();
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

/** Sends a GET (redirects followed) and returns the 2xx response, or the error that says why not. */
async function openUrl(
  url: string,
  what: string,
  session: DownloadSession,
  githubApi: boolean,
): Promise<{ response: Response; idle: IdleWatch }> {
  const idle = new IdleWatch(session.idleTimeoutMs);
  const headers: Record<string, string> = { "user-agent": `reconcile-conformance/${VERSION}` };
  if (githubApi) {
    headers.accept = "application/vnd.github+json";
    headers["x-github-api-version"] = "2022-11-28";
    if (session.githubToken) headers.authorization = `Bearer ${session.githubToken}`;
  }
  let response: Response;
  try {
    response = await fetch(url, {
      redirect: "follow",
      headers,
      signal: AbortSignal.any([session.signal, idle.signal]),
    });
  } catch (error) {
    idle.stop();
    throw transferFailure(url, what, error, idle, session, "connect");
  }
  if (!response.ok) {
    idle.stop();
    await response.body?.cancel().catch(() => undefined);
    const redirected = response.url && response.url !== url ? ` (redirected to ${response.url})` : "";
    throw new InfrastructureError(
      ReleaseErrorCode.httpStatus,
      `kube binaries: ${what}: GET ${url}${redirected} answered ${response.status} ${response.statusText}`.trimEnd(),
    );
  }
  idle.touch();
  return { response, idle };
}

/** Names a failed request: aborted, unreachable (never connected, or no answer) or broken mid-transfer. */
function transferFailure(
  url: string,
  what: string,
  error: unknown,
  idle: IdleWatch,
  session: DownloadSession,
  stage: "connect" | "transfer",
): Error {
  if (session.userSignal?.aborted) return new AbortedError(`kube binaries: ${what}: download aborted`);
  if (session.signal.aborted) return cancelled(session);
  if (idle.timedOut) {
    return stage === "connect"
      ? new InfrastructureError(
          ReleaseErrorCode.unreachable,
          `kube binaries: ${what}: GET ${url}: no answer within ${seconds(idle.timeoutMs)}`,
        )
      : new InfrastructureError(
          ReleaseErrorCode.downloadFailed,
          `kube binaries: ${what}: GET ${url}: the transfer stalled (nothing received for ${seconds(idle.timeoutMs)})`,
        );
  }
  const reason = stage === "connect" ? unreachableReason(error) : undefined;
  if (reason) {
    return new InfrastructureError(
      ReleaseErrorCode.unreachable,
      `kube binaries: ${what}: GET ${url}: unreachable (${reason}): ${describeError(error)}`,
      [],
      { cause: error },
    );
  }
  return new InfrastructureError(
    ReleaseErrorCode.downloadFailed,
    `kube binaries: ${what}: GET ${url} failed: ${describeError(error)}`,
    [],
    { cause: error },
  );
}

function cancelled(session: DownloadSession): Error {
  return session.userSignal?.aborted
    ? new AbortedError("kube binaries: download aborted")
    : new AbortedError("kube binaries: cancelled because another file failed");
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

/**
 * One regular file out of a .tar.gz, by its path in the archive. etcd's
 * archives are GNU tar; a reader of a few lines beats depending on which
 * `tar` the machine has. Understands ustar prefixes, GNU long names and
 * pax `path` records.
 */
export function readTarGzMember(archive: Uint8Array, member: string): Buffer {
  const tar = gunzipSync(archive);
  let offset = 0;
  let longName: string | undefined;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const size = tarNumber(header.subarray(124, 136));
    const type = String.fromCharCode(header[156] ?? 0);
    const dataStart = offset + 512;
    if (dataStart + size > tar.length)
      throw new Error(`the tar archive is truncated (entry at byte ${offset})`);
    const data = tar.subarray(dataStart, dataStart + size);
    offset = dataStart + Math.ceil(size / 512) * 512;
    if (type === "L") {
      longName = cString(data);
      continue;
    }
    if (type === "x") {
      longName = paxPath(data) ?? longName;
      continue;
    }
    if (type === "g") continue;
    const name = (longName ?? ustarName(header)).replace(/^\.\//, "");
    longName = undefined;
    if ((type === "0" || type === "\0") && name === member) return Buffer.from(data);
  }
  throw new Error(`the archive has no file ${member}`);
}

function cString(bytes: Uint8Array): string {
  const end = bytes.indexOf(0);
  return Buffer.from(end === -1 ? bytes : bytes.subarray(0, end)).toString("utf8");
}

function ustarName(header: Uint8Array): string {
  const name = cString(header.subarray(0, 100));
  const isUstar = cString(header.subarray(257, 262)) === "ustar";
  const prefix = isUstar ? cString(header.subarray(345, 500)) : "";
  return prefix ? `${prefix}/${name}` : name;
}

/** A size field: octal text, or big-endian binary when the high bit of the first byte is set (GNU, > 8 GiB). */
function tarNumber(field: Uint8Array): number {
  if ((field[0] ?? 0) & 0x80) {
    let value = (field[0] ?? 0) & 0x7f;
    for (const byte of field.subarray(1)) value = value * 256 + byte;
    return value;
  }
  const text = cString(field).trim();
  return text === "" ? 0 : parseInt(text, 8);
}

/** The `path` of pax extended header records: "<length> path=<value>\n". */
function paxPath(data: Uint8Array): string | undefined {
  const text = Buffer.from(data).toString("utf8");
  return /(?:^|\n)\d+ path=([^\n]*)\n/.exec(text)?.[1];
}

/**
 * One file out of a .zip (etcd's darwin archives, made by `zip -qr`), by
 * its path in the archive; its CRC-32 is checked. Stored and deflated
 * entries; no zip64, which etcd's archives, far below 4 GiB, do not use.
 */
export function readZipMember(archive: Uint8Array, member: string): Buffer {
  const zip = Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength);
  const end = endOfCentralDirectory(zip);
  const entries = zip.readUInt16LE(end + 10);
  let entry = zip.readUInt32LE(end + 16);
  for (let index = 0; index < entries; index++) {
    if (entry + 46 > zip.length || zip.readUInt32LE(entry) !== 0x02014b50) {
      throw new Error("the zip archive's central directory is damaged");
    }
    const method = zip.readUInt16LE(entry + 10);
    const crc = zip.readUInt32LE(entry + 16);
    const compressedSize = zip.readUInt32LE(entry + 20);
    const size = zip.readUInt32LE(entry + 24);
    const nameLength = zip.readUInt16LE(entry + 28);
    const extraLength = zip.readUInt16LE(entry + 30);
    const commentLength = zip.readUInt16LE(entry + 32);
    const localHeader = zip.readUInt32LE(entry + 42);
    const name = zip.toString("utf8", entry + 46, entry + 46 + nameLength);
    entry += 46 + nameLength + extraLength + commentLength;
    if (name !== member) continue;
    if ([compressedSize, size, localHeader].includes(0xffffffff))
      throw new Error(`${member} is a zip64 entry`);
    if (localHeader + 30 > zip.length || zip.readUInt32LE(localHeader) !== 0x04034b50) {
      throw new Error(`the local header of ${member} is damaged`);
    }
    const dataStart =
      localHeader + 30 + zip.readUInt16LE(localHeader + 26) + zip.readUInt16LE(localHeader + 28);
    const data = zip.subarray(dataStart, dataStart + compressedSize);
    let content: Buffer;
    if (method === 0) content = Buffer.from(data);
    else if (method === 8) content = inflateRawSync(data);
    else throw new Error(`${member} uses compression method ${method}; only stored and deflated are read`);
    if (content.length !== size || crc32(content) !== crc)
      throw new Error(`${member} is damaged (size or CRC-32)`);
    return content;
  }
  throw new Error(`the archive has no file ${member}`);
}

/** The end-of-central-directory record: the last 22 bytes, or earlier when the archive has a comment. */
function endOfCentralDirectory(zip: Buffer): number {
  if (zip.length < 22) throw new Error("not a zip archive (too short)");
  const earliest = Math.max(0, zip.length - 22 - 0xffff);
  for (let offset = zip.length - 22; offset >= earliest; offset--) {
    if (zip.readUInt32LE(offset) === 0x06054b50) return offset;
  }
  throw new Error("not a zip archive (no end-of-central-directory record)");
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
