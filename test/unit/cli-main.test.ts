import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { ExitCode } from "../../src/errors.js";
import { VERSION } from "../../src/version.js";
import { runInContext } from "../support/command-context.js";

function run(args: string[]) {
  return runInContext((deps) => main(args, deps), { environment: { env: {}, homeDir: "/nonexistent" } });
}

describe("CLI main", () => {
  it.each([
    [["cluster", "create", "--provider", "nope"], '--provider "nope" is not a provider'],
    [["cluster", "create", "--wat"], "Unknown option '--wat'"],
    [["cluster", "create", "extra"], 'unexpected argument "extra"'],
    [["cluster", "resize"], 'unknown subcommand "resize"'],
    [["frobnicate"], 'unknown command "frobnicate"'],
    [["cluster", "delete", "--provider", "existing"], "never deleted"],
  ])("exits 2 on %j and says why", async (args, message) => {
    const result = await run(args);
    expect(result.code).toBe(ExitCode.usage);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe("");
  });

  it("exits 3 and names the missing binaries when the kwok binaries are absent", async () => {
    const result = await run(["cluster", "create", "--bin-dir", "/nonexistent/bin"]);
    expect(result.code).toBe(ExitCode.infrastructure);
    expect(result.stderr).toContain("not found in /nonexistent/bin");
  });

  it("prints usage on --help and the package version on --version", async () => {
    expect((await run(["--help"])).stdout).toContain("reconcile-conformance cluster create");
    // A command's usage error says "See: reconcile-conformance run --help": that must answer.
    expect(await run(["run", "--bogus"])).toMatchObject({
      code: ExitCode.usage,
      stderr: expect.stringContaining("See: reconcile-conformance run --help") as unknown,
    });
    expect(await run(["run", "--help"])).toMatchObject({
      code: ExitCode.ok,
      stdout: expect.stringContaining("reconcile-conformance run [--config F]") as unknown,
    });
    const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    const version = await run(["--version"]);
    expect(version.stdout.trim()).toBe(pkg.version);
    expect(VERSION).toBe(pkg.version);
  });
});
