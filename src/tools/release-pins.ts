/*
 * The pinned releases of the kwok provider's binaries and the sites that
 * publish them: what hack/kube-binaries/build.sh builds, downloaded instead.
 * Where each pin and URL comes from: docs/design/release-binaries.md.
 */
import { KUBE_VERSION } from "../cluster/cluster-config.js";

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

/** kwok-ci's build number for a Kubernetes version; kwokctl v0.8.0 asks for `.0` too (pkg/config/vars.go:283). */
export const KWOK_CI_BUILD = "kwok.0";
