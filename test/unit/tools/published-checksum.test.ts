import { describe, expect, it } from "vitest";
import { releaseFiles, type ReleaseFile } from "../../../src/tools/download-plan.js";
import { publishedSha256 } from "../../../src/tools/published-checksum.js";
import { ReleaseErrorCode } from "../../../src/tools/release-error-codes.js";

const versions = { kubeVersion: "v1.35.4", etcdVersion: "v3.6.16", kwokVersion: "v0.8.0" };

function fileNamed(files: ReleaseFile[], name: string): ReleaseFile {
  const file = files.find((candidate) => candidate.name === name);
  if (!file) throw new Error(`no ${name} in ${files.map((f) => f.name).join(", ")}`);
  return file;
}

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
