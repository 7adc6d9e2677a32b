import { execFile } from "node:child_process";
import { delimiter, join } from "node:path";
import { access } from "node:fs/promises";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { nodeIsRecentEnough } from "../../src/node-requirement.js";

// The committed CLI bundle run by a Node older than it needs: the machine kind these tests run on
// ships Node 20 on PATH beside the Node 24 the project installs for itself.
const run = promisify(execFile);

/** A node on PATH (or /usr/bin) older than the CLI needs. */
async function oldNode(): Promise<string> {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/bin", "/usr/local/bin"];
  for (const dir of dirs) {
    const candidate = join(dir, "node");
    if (
      !(await access(candidate).then(
        () => true,
        () => false,
      ))
    )
      continue;
    const { stdout } = await run(candidate, ["--version"]);
    if (!nodeIsRecentEnough(stdout.trim())) return candidate;
  }
  throw new Error(
    "this test needs a Node older than 22.19 on PATH or in /usr/bin (the machine kind ships Node 20)",
  );
}

describe("dist/cli.js on an old Node", () => {
  it("says which Node it needs, with no stack trace, and exits 3", async () => {
    const node = await oldNode();
    const result = await run(node, ["dist/cli.js", "--help"]).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(
      /^reconcile-conformance needs Node\.js 22\.19\.0 or later; this is Node\.js 2\d\.\d+\.\d+ \(/,
    );
    expect(result.stderr).not.toMatch(/ERR_UNKNOWN_BUILTIN_MODULE|\n\s+at /);
  });

  it("and runs on the Node it needs", async () => {
    const { stdout } = await run(process.execPath, ["dist/cli.js", "--help"]);
    expect(stdout).toMatch(/^reconcile-conformance \d+\.\d+\.\d+: /);
  });
});
