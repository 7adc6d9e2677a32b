import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { main } from "../../../src/cli/main.js";
import { ExitCode } from "../../../src/errors.js";
import { VERSION } from "../../../src/version.js";
import { runInContext } from "../../support/command-context.js";

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

  it("exits 3 naming the missing binaries and why they cannot be built", async () => {
    // No PATH, so no Go: the build the flag asks for cannot run (and nothing is downloaded).
    const result = await run(["cluster", "create", "--bin-dir", "/nonexistent/bin", "--binaries", "build"]);
    expect(result.code).toBe(ExitCode.infrastructure);
    expect(result.stderr).toContain(
      "kube binaries: cannot build them (--binaries build: kwokctl, kwok, etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl not in /nonexistent/bin): Go is not on PATH",
    );
  });

  it("exits 2 naming --binaries when its value is not a way to get them", async () => {
    const result = await run(["cluster", "create", "--binaries", "fetch"]);
    expect(result.code).toBe(ExitCode.usage);
    expect(result.stderr).toContain('--binaries: "fetch" is not a way to get the binaries');
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
    const pkg = JSON.parse(await readFile(new URL("../../../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    const version = await run(["--version"]);
    expect(version.stdout.trim()).toBe(pkg.version);
    expect(VERSION).toBe(pkg.version);
  });
});
