import { access } from "node:fs/promises";
import { isAbsolute, relative } from "node:path";
import { isRecord } from "./records.js";

/** True when the path exists (any type). */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** What the common file system error codes mean, in words. */
const ERRNO_WORDS: Readonly<Record<string, string>> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EISDIR: "it is a directory, not a file",
  ENOTDIR: "a part of the path is not a directory",
  ELOOP: "too many symbolic links",
  EMFILE: "too many open files",
};

/**
 * A file system error as a person reads it: what its code means, then the
 * code itself for searching ("no such file or directory (ENOENT)"); its
 * message when it has no code.
 */
export function errnoText(error: unknown): string {
  const code = isRecord(error) ? error.code : undefined;
  if (typeof code !== "string") return error instanceof Error ? error.message : String(error);
  const words = ERRNO_WORDS[code];
  return words === undefined ? code : `${words} (${code})`;
}

/** A path as a person at `base` would type it: relative when it lies under `base`, else as it is. */
export function pathFrom(base: string, path: string): string {
  const fromBase = relative(base, path);
  return fromBase !== "" && !fromBase.startsWith("..") && !isAbsolute(fromBase) ? fromBase : path;
}
