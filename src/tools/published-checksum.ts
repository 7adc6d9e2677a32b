/*
 * The expected SHA-256 of a release file, read from the text its publisher
 * published in one of the formats of ReleaseChecksum. Pure.
 */
import { InfrastructureError } from "../errors.js";
import { isRecord } from "../util/records.js";
import type { ReleaseFile } from "./download-plan.js";
import { ReleaseErrorCode } from "./release-error-codes.js";

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
