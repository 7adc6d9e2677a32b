import { describe, expect, it } from "vitest";
import { KWOK_BINARIES } from "../../../src/cluster/kwok-provider.js";
import { InfrastructureError, UsageError } from "../../../src/errors.js";
import {
  currentReleasePlatform,
  releaseFiles,
  type ReleaseChecksum,
  type ReleaseFile,
} from "../../../src/tools/download-plan.js";
import { ReleaseErrorCode } from "../../../src/tools/release-error-codes.js";

const versions = { kubeVersion: "v1.35.4", etcdVersion: "v3.6.16", kwokVersion: "v0.8.0" };

function fileNamed(files: ReleaseFile[], name: string): ReleaseFile {
  const file = files.find((candidate) => candidate.name === name);
  if (!file) throw new Error(`no ${name} in ${files.map((f) => f.name).join(", ")}`);
  return file;
}

describe("releaseFiles", () => {
  it("describes every linux/amd64 file with its official URL and published checksum", () => {
    expect(releaseFiles({ os: "linux", arch: "amd64", ...versions })).toEqual([
      {
        name: "kube-apiserver",
        source: "kubernetes v1.35.4",
        url: "https://dl.k8s.io/release/v1.35.4/bin/linux/amd64/kube-apiserver",
        checksum: {
          format: "sha256-file",
          url: "https://dl.k8s.io/release/v1.35.4/bin/linux/amd64/kube-apiserver.sha256",
        },
      },
      {
        name: "kube-controller-manager",
        source: "kubernetes v1.35.4",
        url: "https://dl.k8s.io/release/v1.35.4/bin/linux/amd64/kube-controller-manager",
        checksum: {
          format: "sha256-file",
          url: "https://dl.k8s.io/release/v1.35.4/bin/linux/amd64/kube-controller-manager.sha256",
        },
      },
      {
        name: "kube-scheduler",
        source: "kubernetes v1.35.4",
        url: "https://dl.k8s.io/release/v1.35.4/bin/linux/amd64/kube-scheduler",
        checksum: {
          format: "sha256-file",
          url: "https://dl.k8s.io/release/v1.35.4/bin/linux/amd64/kube-scheduler.sha256",
        },
      },
      {
        name: "kubectl",
        source: "kubernetes v1.35.4",
        url: "https://dl.k8s.io/release/v1.35.4/bin/linux/amd64/kubectl",
        checksum: {
          format: "sha256-file",
          url: "https://dl.k8s.io/release/v1.35.4/bin/linux/amd64/kubectl.sha256",
        },
      },
      {
        name: "etcd",
        source: "etcd v3.6.16",
        url: "https://github.com/etcd-io/etcd/releases/download/v3.6.16/etcd-v3.6.16-linux-amd64.tar.gz",
        checksum: {
          format: "sha256sums",
          url: "https://github.com/etcd-io/etcd/releases/download/v3.6.16/SHA256SUMS",
          entry: "etcd-v3.6.16-linux-amd64.tar.gz",
        },
        extract: { archive: "tar.gz", member: "etcd-v3.6.16-linux-amd64/etcd" },
      },
      {
        name: "kwok",
        source: "kwok v0.8.0",
        url: "https://github.com/kubernetes-sigs/kwok/releases/download/v0.8.0/kwok-linux-amd64",
        checksum: {
          format: "github-release-digest",
          url: "https://api.github.com/repos/kubernetes-sigs/kwok/releases/tags/v0.8.0",
          asset: "kwok-linux-amd64",
        },
      },
      {
        name: "kwokctl",
        source: "kwok v0.8.0",
        url: "https://github.com/kubernetes-sigs/kwok/releases/download/v0.8.0/kwokctl-linux-amd64",
        checksum: {
          format: "github-release-digest",
          url: "https://api.github.com/repos/kubernetes-sigs/kwok/releases/tags/v0.8.0",
          asset: "kwokctl-linux-amd64",
        },
      },
    ]);
  });

  const platforms = [
    ["linux", "amd64"],
    ["linux", "arm64"],
    ["darwin", "amd64"],
    ["darwin", "arm64"],
  ] as const;

  it.each(platforms)("%s/%s yields exactly the binaries the kwok provider needs", (os, arch) => {
    const names = releaseFiles({ os, arch, ...versions }).map((file) => file.name);
    expect([...names].sort()).toEqual([...KWOK_BINARIES].sort());
  });

  it.each<[string, string, string, string, ReleaseChecksum]>([
    [
      "linux",
      "arm64",
      "kube-scheduler",
      "https://dl.k8s.io/release/v1.35.4/bin/linux/arm64/kube-scheduler",
      {
        format: "sha256-file",
        url: "https://dl.k8s.io/release/v1.35.4/bin/linux/arm64/kube-scheduler.sha256",
      },
    ],
    [
      "linux",
      "arm64",
      "etcd",
      "https://github.com/etcd-io/etcd/releases/download/v3.6.16/etcd-v3.6.16-linux-arm64.tar.gz",
      {
        format: "sha256sums",
        url: "https://github.com/etcd-io/etcd/releases/download/v3.6.16/SHA256SUMS",
        entry: "etcd-v3.6.16-linux-arm64.tar.gz",
      },
    ],
    [
      "linux",
      "arm64",
      "kwokctl",
      "https://github.com/kubernetes-sigs/kwok/releases/download/v0.8.0/kwokctl-linux-arm64",
      {
        format: "github-release-digest",
        url: "https://api.github.com/repos/kubernetes-sigs/kwok/releases/tags/v0.8.0",
        asset: "kwokctl-linux-arm64",
      },
    ],
    // dl.k8s.io publishes no darwin server binaries: kwokctl's own fallback, kwok-ci's builds.
    [
      "darwin",
      "arm64",
      "kube-apiserver",
      "https://github.com/kwok-ci/k8s/releases/download/v1.35.4-kwok.0-darwin-arm64/kube-apiserver",
      {
        format: "github-release-digest",
        url: "https://api.github.com/repos/kwok-ci/k8s/releases/tags/v1.35.4-kwok.0-darwin-arm64",
        asset: "kube-apiserver",
      },
    ],
    [
      "darwin",
      "amd64",
      "kube-controller-manager",
      "https://github.com/kwok-ci/k8s/releases/download/v1.35.4-kwok.0-darwin-amd64/kube-controller-manager",
      {
        format: "github-release-digest",
        url: "https://api.github.com/repos/kwok-ci/k8s/releases/tags/v1.35.4-kwok.0-darwin-amd64",
        asset: "kube-controller-manager",
      },
    ],
    // ...but kubectl is official on darwin too.
    [
      "darwin",
      "arm64",
      "kubectl",
      "https://dl.k8s.io/release/v1.35.4/bin/darwin/arm64/kubectl",
      { format: "sha256-file", url: "https://dl.k8s.io/release/v1.35.4/bin/darwin/arm64/kubectl.sha256" },
    ],
    [
      "darwin",
      "amd64",
      "etcd",
      "https://github.com/etcd-io/etcd/releases/download/v3.6.16/etcd-v3.6.16-darwin-amd64.zip",
      {
        format: "sha256sums",
        url: "https://github.com/etcd-io/etcd/releases/download/v3.6.16/SHA256SUMS",
        entry: "etcd-v3.6.16-darwin-amd64.zip",
      },
    ],
    [
      "darwin",
      "arm64",
      "kwok",
      "https://github.com/kubernetes-sigs/kwok/releases/download/v0.8.0/kwok-darwin-arm64",
      {
        format: "github-release-digest",
        url: "https://api.github.com/repos/kubernetes-sigs/kwok/releases/tags/v0.8.0",
        asset: "kwok-darwin-arm64",
      },
    ],
  ])("%s/%s %s comes from %s", (os, arch, name, url, checksum) => {
    const file = fileNamed(releaseFiles({ os, arch, ...versions }), name);
    expect(file.url).toBe(url);
    expect(file.checksum).toEqual(checksum);
  });

  it.each([
    ["linux", "tar.gz", "etcd-v3.6.16-linux-arm64/etcd", "arm64"],
    ["darwin", "zip", "etcd-v3.6.16-darwin-arm64/etcd", "arm64"],
  ] as const)("takes etcd out of the %s archive (%s) at its release path", (os, archive, member, arch) => {
    expect(fileNamed(releaseFiles({ os, arch, ...versions }), "etcd").extract).toEqual({ archive, member });
  });

  it("only etcd comes in an archive", () => {
    const archived = releaseFiles({ os: "linux", arch: "amd64", ...versions }).filter((file) => file.extract);
    expect(archived.map((file) => file.name)).toEqual(["etcd"]);
  });

  it.each([
    ["windows", "amd64"],
    ["linux", "386"],
    ["linux", "s390x"],
    ["freebsd", "amd64"],
    ["darwin", "x64"],
  ])("refuses %s/%s, naming the platform and the Go build", (os, arch) => {
    let caught: unknown;
    try {
      releaseFiles({ os, arch, ...versions });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InfrastructureError);
    expect(caught).toMatchObject({ code: ReleaseErrorCode.unsupportedPlatform });
    expect(String(caught)).toContain(`${os}/${arch}`);
    expect(String(caught)).toContain("hack/kube-binaries/build.sh");
  });

  it("points every publisher at its mirror, a trailing slash or not", () => {
    const files = releaseFiles({
      os: "linux",
      arch: "amd64",
      ...versions,
      baseUrls: {
        kubernetes: "http://127.0.0.1:8080/k8s/release/",
        githubReleases: "http://127.0.0.1:8080/gh",
        githubApi: "http://127.0.0.1:8080/api//",
      },
    });
    expect(fileNamed(files, "kubectl").url).toBe(
      "http://127.0.0.1:8080/k8s/release/v1.35.4/bin/linux/amd64/kubectl",
    );
    expect(fileNamed(files, "etcd").checksum.url).toBe(
      "http://127.0.0.1:8080/gh/etcd-io/etcd/releases/download/v3.6.16/SHA256SUMS",
    );
    expect(fileNamed(files, "kwok").url).toBe(
      "http://127.0.0.1:8080/gh/kubernetes-sigs/kwok/releases/download/v0.8.0/kwok-linux-amd64",
    );
    expect(fileNamed(files, "kwok").checksum.url).toBe(
      "http://127.0.0.1:8080/api/repos/kubernetes-sigs/kwok/releases/tags/v0.8.0",
    );
  });

  it.each([
    [{ baseUrls: { kubernetes: "dl.k8s.io/release" } }, "kubernetes"],
    [{ baseUrls: { githubApi: "ftp://mirror.example/api" } }, "githubApi"],
    [{ kubeVersion: "1.35.4" }, "kubeVersion"],
    [{ etcdVersion: "v3.6.16/../../evil" }, "etcdVersion"],
  ])("refuses a malformed setting %j, naming it", (override, setting) => {
    expect(() => releaseFiles({ os: "linux", arch: "amd64", ...versions, ...override })).toThrow(UsageError);
    expect(() => releaseFiles({ os: "linux", arch: "amd64", ...versions, ...override })).toThrow(setting);
  });
});

describe("currentReleasePlatform", () => {
  it.each([
    ["linux", "x64", { os: "linux", arch: "amd64" }],
    ["linux", "arm64", { os: "linux", arch: "arm64" }],
    ["darwin", "arm64", { os: "darwin", arch: "arm64" }],
    ["darwin", "x64", { os: "darwin", arch: "amd64" }],
  ] as const)("maps Node's %s/%s to Go's names", (platform, arch, expected) => {
    expect(currentReleasePlatform(platform, arch)).toEqual(expected);
  });

  it.each([
    ["win32", "x64"],
    ["linux", "ia32"],
  ] as const)("refuses %s/%s", (platform, arch) => {
    expect(() => currentReleasePlatform(platform, arch)).toThrow(/no release binaries for/);
  });
});
