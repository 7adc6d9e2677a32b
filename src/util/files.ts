import { access } from "node:fs/promises";

/** True when the path exists (any type). */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
