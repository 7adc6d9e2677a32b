import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { KWOK_BINARIES } from "../../../src/cluster/kwok-provider.js";
import { InfrastructureError, UsageError } from "../../../src/errors.js";
import {
  currentReleasePlatform,
  PINNED_RELEASES,
  publishedSha256,
  readTarGzMember,
  readZipMember,
  ReleaseErrorCode,
  releaseFiles,
  unreachableReason,
  type ReleaseChecksum,
  type ReleaseFile,
} from "../../../src/tools/release-binaries.js";

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

describe("PINNED_RELEASES", () => {
  it("are the releases hack/kube-binaries/build.sh builds", async () => {
    const goMod = (module: string) =>
      readFile(new URL(`../../../hack/kube-binaries/${module}/go.mod`, import.meta.url), "utf8");
    const required = (text: string, path: string) =>
      new RegExp(`^\\s*(?:require\\s+)?${path.replaceAll(".", "\\.")} (v\\S+)`, "m").exec(text)?.[1];
    expect({
      kubeVersion: required(await goMod("kubernetes"), "k8s.io/kubernetes"),
      etcdVersion: required(await goMod("etcd"), "go.etcd.io/etcd/server/v3"),
      kwokVersion: required(await goMod("kwok"), "sigs.k8s.io/kwok"),
    }).toEqual(PINNED_RELEASES);
  });
});

describe("publishedSha256", () => {
  const digest = "3f".repeat(32);
  const other = "a1".repeat(32);
  const [kubectl, etcd, kwok] = ["kubectl", "etcd", "kwok"].map((name) =>
    fileNamed(releaseFiles({ os: "linux", arch: "amd64", ...versions }), name),
  );
  if (!kubectl || !etcd || !kwok) throw new Error("fixture files missing");
  const release = (assets: unknown[]) => JSON.stringify({ tag_name: "v0.8.0", assets });

  it.each<[string, ReleaseFile, string]>([
    ["dl.k8s.io's bare digest", kubectl, digest],
    ["a digest with a newline", kubectl, `${digest}\n`],
    ["sha256sum's `<hex>  <name>`", kubectl, `${digest}  kubectl\n`],
    ["an uppercase digest", kubectl, digest.toUpperCase()],
    [
      "etcd's SHA256SUMS line among others",
      etcd,
      `${other}  etcd-v3.6.16-darwin-amd64.zip\n${digest}  etcd-v3.6.16-linux-amd64.tar.gz\n${other}  etcd-v3.6.16-linux-arm64.tar.gz\n`,
    ],
    ["a binary-mode SHA256SUMS line", etcd, `${digest} *etcd-v3.6.16-linux-amd64.tar.gz\n`],
    ["a SHA256SUMS line with ./", etcd, `${digest}  ./etcd-v3.6.16-linux-amd64.tar.gz`],
    [
      "the asset's digest in GitHub's release record",
      kwok,
      release([
        { name: "kwokctl-linux-amd64", digest: `sha256:${other}` },
        { name: "kwok-linux-amd64", digest: `sha256:${digest}`, size: 83564248 },
      ]),
    ],
  ])("reads %s", (_case, file, published) => {
    expect(publishedSha256(file, published)).toBe(digest);
  });

  it.each<[string, ReleaseFile, string, string]>([
    ["an HTML page", kubectl, "<html>Not Found</html>", "does not start with a SHA-256"],
    ["a short digest", kubectl, "abc123", "does not start with a SHA-256"],
    [
      "SHA256SUMS without the archive",
      etcd,
      `${other}  etcd-v3.6.16-linux-arm64.tar.gz\n`,
      "no line for etcd-v3.6.16-linux-amd64.tar.gz",
    ],
    [
      "SHA256SUMS with a similar name only",
      etcd,
      `${other}  etcd-v3.6.16-linux-amd64.tar.gz.asc\n`,
      "no line for etcd-v3.6.16-linux-amd64.tar.gz",
    ],
    [
      "a release without the asset",
      kwok,
      release([{ name: "kwok-linux-arm64", digest: `sha256:${other}` }]),
      "no asset named kwok-linux-amd64",
    ],
    [
      "an asset without a digest",
      kwok,
      release([{ name: "kwok-linux-amd64", digest: null }]),
      "has no sha256 digest",
    ],
    [
      "a sha512 digest",
      kwok,
      release([{ name: "kwok-linux-amd64", digest: `sha512:${digest}${digest}` }]),
      "has no sha256 digest",
    ],
    ["an answer that is not JSON", kwok, "rate limited", "not JSON"],
  ])("refuses %s, naming the checksum source", (_case, file, published, why) => {
    let caught: unknown;
    try {
      publishedSha256(file, published);
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: ReleaseErrorCode.checksumMissing });
    expect(String(caught)).toContain(why);
    expect(String(caught)).toContain(file.checksum.url);
  });
});

describe("unreachableReason", () => {
  const socketError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code });
  const fetchFailed = (cause: unknown) => new TypeError("fetch failed", { cause });

  it.each<[string, unknown, string | undefined]>([
    ["connection refused", fetchFailed(socketError("ECONNREFUSED")), "ECONNREFUSED"],
    ["an unknown host", fetchFailed(socketError("ENOTFOUND")), "ENOTFOUND"],
    ["a DNS server that does not answer", fetchFailed(socketError("EAI_AGAIN")), "EAI_AGAIN"],
    [
      "undici's connect timeout",
      fetchFailed(socketError("UND_ERR_CONNECT_TIMEOUT")),
      "UND_ERR_CONNECT_TIMEOUT",
    ],
    ["no route", fetchFailed(socketError("EHOSTUNREACH")), "EHOSTUNREACH"],
    [
      "every address of a host refused (happy eyeballs)",
      fetchFailed(
        new AggregateError([socketError("ECONNREFUSED"), socketError("ENETUNREACH")], "all failed"),
      ),
      "ECONNREFUSED",
    ],
    ["a bad certificate", fetchFailed(socketError("CERT_HAS_EXPIRED")), undefined],
    ["a socket closed by the other side", fetchFailed(socketError("UND_ERR_SOCKET")), undefined],
    ["an error without a code", new Error("boom"), undefined],
    ["a thrown string", "ECONNREFUSED", undefined],
  ])("%s", (_case, error, expected) => {
    expect(unreachableReason(error)).toBe(expected);
  });

  it("survives a cause cycle", () => {
    const first = new Error("first");
    const second = new Error("second", { cause: first });
    Object.assign(first, { cause: second });
    expect(unreachableReason(first)).toBeUndefined();
  });
});

// Made with GNU tar 1.34 from a directory laid out like etcd's release
// (etcd-v3.6.16-linux-amd64/{Documentation/<120-character name>.md,etcd,etcdctl}):
// `tar --format=gnu -czf` (long names as ././@LongLink entries) and
// `tar --format=pax -czf` (long names as pax path records).
const GNU_TAR_GZ =
  "H4sIAAAAAAAAA+3WTW6DMBAFYK97Cl8AGOMftl1kySUcQBUq2BI1VXv7QpQNSAmRkoAa3rcxkpEGeXgDVSjK6FvGJhYmamrX/0S2LY1KDr7o28oFG2rvEnYPGmRan9bBfD1dCy1JpiSJBCNhUq0Y13dVvVH/FWzHOeu8D9fuW9r/p+IkTt5z7z7y2n0+qcbYYKPUxf6nSk7eBRLCUMp4/qTnmdh5/6vb8m83Erfl1if02tbo/1L+ifR0/kuRkWGc1jiAnee/GUb/29YPAZu5mP9x40E1FvMv1Oz/Tw0r8r+Gsc38WDvb/WIM7NDV/BeheUSN5fxns/xrwvd/Hec2YwQAAAAAAAAAAAAAALyQPxerHCUAKAAA";
const PAX_TAR_GZ =
  "H4sIAAAAAAAAA+2ZS26DMBCGWecUXACw8asssuuiy17BBdQi8aiIqejta6qmAlLekdOI+RbYaGwN1vD7xyJWYeR8EJe7mDtpkle1I7OIU+9Z1k+xjOLy5D0WYZXFuZIqKXJrOUjDKf1uNf0WYV9YmBFEfET0nYUwZ5xYdr0i12Kqk5KlfhQTuf4hfmBnKsniIxYBR5hxLFx9eaA4CA46KC+D7DcYDs689bKAmcRD+u+I3tuUo9G4YGxQ/02/q389mlo2u9IaRznrvywKNTZuKt5f3J0ws/4tN5CLmdr/KSLd+hPk+xj2fxNg4dvvUr0dZ74Iy6t/HdwsOoBXXR8TZZ/SP0Ksp3/d45ZtRJM73//TIn/dtwL2zaD+W47fjNmSY/n5j3IB/m+EPz2VibWeep5562UBMxnU/1bRt5j0f0x7+mdch8H/DdCU2X5Jcll+gmh3yFz/D1W6Osdy/2dEUPB/E4D/75tR/98i+hbT/n/x/4fA+d8MP2WGTwAAAAAAAAAA2AFfNfz5sQAoAAA=";
// Made with Info-ZIP 3.0 like etcd's darwin archives (`zip -q`), plus one
// stored entry (`zip -0`) and an archive comment (`zip -z`): etcd deflated
// (761 bytes, "etcd darwin binary " x 40 and a newline), etcdctl stored ("ctl\n").
const ZIP =
  "UEsDBBQAAAAIALMpfl3c+I96HQAAAPkCAAAeABwAZXRjZC12My42LjE2LWRhcndpbi1hcm02NC9ldGNkVVQJAAMBBg1rAQYNa3V4CwABBAAAAAAEAAAAAEstSU5RSEksKs/MU0jKzEssqlRIHRUaFRruQlwAUEsDBAoAAAAAALMpfl3IirJyBAAAAAQAAAAhABwAZXRjZC12My42LjE2LWRhcndpbi1hcm02NC9ldGNkY3RsVVQJAAMBBg1rAQYNa3V4CwABBAAAAAAEAAAAAGN0bApQSwECHgMUAAAACACzKX5d3PiPeh0AAAD5AgAAHgAYAAAAAAABAAAApIEAAAAAZXRjZC12My42LjE2LWRhcndpbi1hcm02NC9ldGNkVVQFAAMBBg1rdXgLAAEEAAAAAAQAAAAAUEsBAh4DCgAAAAAAsyl+XciKsnIEAAAABAAAACEAGAAAAAAAAAAAAKSBdQAAAGV0Y2QtdjMuNi4xNi1kYXJ3aW4tYXJtNjQvZXRjZGN0bFVUBQADAQYNa3V4CwABBAAAAAAEAAAAAFBLBQYAAAAAAgACAMsAAADUAAAADABldGNkIHJlbGVhc2U=";

describe("readTarGzMember", () => {
  const linux = "etcd-v3.6.16-linux-amd64";
  const longName = `${linux}/Documentation/${"a".repeat(120)}.md`;

  it.each([
    ["GNU", GNU_TAR_GZ],
    ["pax", PAX_TAR_GZ],
  ])("reads members of a %s archive, after an entry with a long name", (_format, archive) => {
    const bytes = Buffer.from(archive, "base64");
    expect(readTarGzMember(bytes, `${linux}/etcd`).toString()).toBe("etcd binary\n");
    expect(readTarGzMember(bytes, `${linux}/etcdctl`).toString()).toBe("etcdctl binary\n");
    expect(readTarGzMember(bytes, longName).toString()).toBe("long\n");
  });

  it("refuses a member that is not there, or is a directory", () => {
    const bytes = Buffer.from(GNU_TAR_GZ, "base64");
    expect(() => readTarGzMember(bytes, `${linux}/etcdutl`)).toThrow(`no file ${linux}/etcdutl`);
    expect(() => readTarGzMember(bytes, `${linux}/Documentation/`)).toThrow("no file");
    expect(() => readTarGzMember(bytes, "etcd")).toThrow("no file etcd");
  });

  it("refuses what is not a gzip stream", () => {
    expect(() => readTarGzMember(Buffer.from(ZIP, "base64"), `${linux}/etcd`)).toThrow();
  });
});

describe("readZipMember", () => {
  const darwin = "etcd-v3.6.16-darwin-arm64";

  it("reads a deflated and a stored member of an archive with a comment", () => {
    const bytes = Buffer.from(ZIP, "base64");
    expect(readZipMember(bytes, `${darwin}/etcd`).toString()).toBe(`${"etcd darwin binary ".repeat(40)}\n`);
    expect(readZipMember(bytes, `${darwin}/etcdctl`).toString()).toBe("ctl\n");
  });

  it("refuses a member that is not there", () => {
    expect(() => readZipMember(Buffer.from(ZIP, "base64"), `${darwin}/etcdutl`)).toThrow(
      `no file ${darwin}/etcdutl`,
    );
  });

  it("refuses a damaged member (CRC-32)", () => {
    const bytes = Buffer.from(ZIP, "base64");
    // The stored "ctl\n" sits right before the central directory; change one of its bytes.
    const stored = bytes.indexOf("ctl\nPK\x01\x02", 0, "latin1");
    expect(stored).toBeGreaterThan(0);
    bytes[stored] = "x".charCodeAt(0);
    expect(() => readZipMember(bytes, `${darwin}/etcdctl`)).toThrow("damaged");
  });

  it("refuses what is not a zip archive", () => {
    expect(() => readZipMember(Buffer.from(GNU_TAR_GZ, "base64"), `${darwin}/etcd`)).toThrow(
      "not a zip archive",
    );
    expect(() => readZipMember(Buffer.alloc(4), `${darwin}/etcd`)).toThrow("not a zip archive");
  });
});
