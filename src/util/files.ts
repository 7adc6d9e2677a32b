import { access } from "node:fs/promises";
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

/** A file system error as a person reads it: its code (ENOENT, EACCES), else its message. */
export function errnoText(error: unknown): string {
  const code = isRecord(error) ? error.code : undefined;
  return typeof code === "string" ? code : error instanceof Error ? error.message : String(error);
}
