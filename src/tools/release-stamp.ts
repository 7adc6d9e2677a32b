/*
 * The stamp a download leaves in the bin directory: what was downloaded,
 * from where, and what it hashed to; read back to tell a download from a build.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { isRecord } from "../util/records.js";
import type { ReleaseVersions } from "./release-pins.js";

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
