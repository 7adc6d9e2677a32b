import { chmod, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A directory holding executables with the given names (contents irrelevant: the runner is fake). */
export async function pathWith(...names: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "rc-path-"));
  for (const name of names) {
    await writeFile(join(dir, name), "#!/bin/sh\n");
    await chmod(join(dir, name), 0o755);
  }
  return dir;
}
