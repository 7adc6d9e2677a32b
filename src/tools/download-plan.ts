/*
 * What to fetch for a kwok bin directory on one platform: each file's URL,
 * where its checksum is published, and the archive member to take out.
 * Pure: the publishers' URL schemes are tested without a network.
 */
import { InfrastructureError, UsageError } from "../errors.js";
import { ReleaseErrorCode } from "./release-error-codes.js";
import {
  DEFAULT_BASE_URLS,
  KWOK_CI_BUILD,
  type ReleaseBaseUrls,
  type ReleaseVersions,
} from "./release-pins.js";

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

/** Go's names for `os`/`arch`, or an unsupported-platform error naming them and the Go build. */
export function releasePlatform(os: string, arch: string): ReleasePlatform {
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
 * without a network. Where each name comes from: docs/design/release-binaries.md.
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
