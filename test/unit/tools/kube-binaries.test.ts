import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { KWOK_BINARIES } from "../../../src/cluster/kwok-provider.js";
import { UsageError } from "../../../src/errors.js";
import {
  binariesMode,
  findBuildScript,
  inspectBinDir,
  planKubeBinaries,
  releaseMirrors,
  type BinDirState,
  type PlanFacts,
} from "../../../src/tools/kube-binaries.js";
import { PINNED_RELEASES } from "../../../src/tools/release-pins.js";
import { RELEASE_STAMP_FILE, type ReleaseStamp } from "../../../src/tools/release-stamp.js";

const BIN = "/cache/kube/v1.35.4";
const linux: PlanFacts = {
  go: "/usr/local/go/bin/go",
  buildScript: "/kit/hack/kube-binaries/build.sh",
  platform: { os: "linux", arch: "amd64" },
};
const withoutGo: PlanFacts = { ...linux, go: undefined };
const empty: BinDirState = { missing: [...KWOK_BINARIES], origin: "unknown" };
const built: BinDirState = { missing: [], origin: "build" };
const stamp = (overrides: Partial<ReleaseStamp> = {}): ReleaseStamp => ({
  apiVersion: "reconcile-conformance.dev/release-binaries/v1",
  platform: "linux/amd64",
  versions: PINNED_RELEASES,
  downloadedAt: "2026-11-30T00:00:00Z",
  files: [],
  ...overrides,
});
const downloaded: BinDirState = { missing: [], origin: "download", releaseStamp: stamp() };

describe("binariesMode", () => {
  it("takes the flag, else the environment, else auto", () => {
    expect(binariesMode("build", { RECONCILE_CONFORMANCE_BINARIES: "download" }, "--binaries")).toBe("build");
    expect(binariesMode(undefined, { RECONCILE_CONFORMANCE_BINARIES: "download" }, "--binaries")).toBe(
      "download",
    );
    expect(binariesMode(undefined, {}, "--binaries")).toBe("auto");
    expect(binariesMode("", {}, "input binaries")).toBe("auto");
  });

  it("names where a bad value came from", () => {
    expect(() => binariesMode("fetch", {}, "--binaries")).toThrow(
      new UsageError(
        "cli/invalid-binaries",
        '--binaries: "fetch" is not a way to get the binaries: use auto, download, build',
      ),
    );
    expect(() => binariesMode(undefined, { RECONCILE_CONFORMANCE_BINARIES: "yes" }, "--binaries")).toThrow(
      /RECONCILE_CONFORMANCE_BINARIES: "yes"/,
    );
  });
});

describe("releaseMirrors", () => {
  it("maps each mirror variable to its site, leaving the others out", () => {
    expect(
      releaseMirrors({
        RECONCILE_CONFORMANCE_KUBE_RELEASES: "http://mirror/k8s",
        RECONCILE_CONFORMANCE_GITHUB_API: "http://mirror/api",
        RECONCILE_CONFORMANCE_GITHUB_RELEASES: "",
      }),
    ).toEqual({ kubernetes: "http://mirror/k8s", githubApi: "http://mirror/api" });
    expect(releaseMirrors({})).toEqual({});
  });
});

describe("planKubeBinaries", () => {
  it("auto uses a complete bin dir whatever put it there", () => {
    expect(planKubeBinaries(BIN, "auto", built, linux)).toEqual({
      action: "use",
      why: `built from Go modules in ${BIN}`,
    });
    expect(planKubeBinaries(BIN, "auto", downloaded, withoutGo)).toEqual({
      action: "use",
      why: `downloaded releases (Kubernetes v1.35.4, etcd ${PINNED_RELEASES.etcdVersion}, kwok ${PINNED_RELEASES.kwokVersion} for linux/amd64) in ${BIN}`,
    });
    expect(planKubeBinaries(BIN, "auto", { missing: [], origin: "unknown" }, linux).why).toBe(
      `binaries put there by hand in ${BIN}`,
    );
  });

  it("auto downloads what is missing, building instead only when it can", () => {
    const missing = { ...empty, missing: ["kwok", "etcd"] };
    expect(planKubeBinaries(BIN, "auto", missing, linux)).toEqual({
      action: "download",
      why: `kwok, etcd not in ${BIN}`,
      fallback: "build",
    });
    // Without Go there is nothing to fall back to: the download is the only way.
    expect(planKubeBinaries(BIN, "auto", missing, withoutGo)).toEqual({
      action: "download",
      why: `kwok, etcd not in ${BIN}`,
    });
  });

  it("auto builds on a platform with no releases, and says when it cannot", () => {
    const unsupported = {
      ...linux,
      platform: { unsupported: "no release binaries are published for freebsd/x64" },
    };
    expect(planKubeBinaries(BIN, "auto", empty, unsupported)).toEqual({
      action: "build",
      why: `${KWOK_BINARIES.join(", ")} not in ${BIN}, and no release binaries are published for freebsd/x64`,
    });
    expect(planKubeBinaries(BIN, "auto", empty, { ...unsupported, go: undefined })).toMatchObject({
      action: "build",
      problem: "Go is not on PATH (the build needs Go 1.26 or later)",
    });
  });

  it("download keeps only a current download of this platform", () => {
    expect(planKubeBinaries(BIN, "download", downloaded, linux).action).toBe("use");
    expect(planKubeBinaries(BIN, "download", built, linux)).toEqual({
      action: "download",
      why: `--binaries download: the binaries in ${BIN} were not downloaded`,
    });
    const older = {
      ...downloaded,
      releaseStamp: stamp({ versions: { ...PINNED_RELEASES, kwokVersion: "v0.7.0" } }),
    };
    expect(planKubeBinaries(BIN, "download", older, linux).why).toContain("is of other releases");
    const arm = { ...downloaded, releaseStamp: stamp({ platform: "linux/arm64" }) };
    expect(planKubeBinaries(BIN, "download", arm, linux).action).toBe("download");
    // download never falls back to the build.
    expect(planKubeBinaries(BIN, "download", empty, linux).fallback).toBeUndefined();
  });

  it("build always runs the script (it keeps a current build), and needs Go and the script", () => {
    expect(planKubeBinaries(BIN, "build", built, linux)).toEqual({
      action: "build",
      why: `--binaries build: the Go build in ${BIN}, rebuilt only if its stamp is stale`,
    });
    expect(planKubeBinaries(BIN, "build", downloaded, linux).why).toBe(
      `--binaries build: the binaries in ${BIN} were not built from Go modules`,
    );
    expect(planKubeBinaries(BIN, "build", empty, { ...linux, buildScript: undefined }).problem).toBe(
      "hack/kube-binaries/build.sh is not beside the kit",
    );
  });
});

describe("inspectBinDir", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("names missing and non-executable binaries, and the stamp that says who put them there", async () => {
    dir = await mkdtemp(join(tmpdir(), "rc-bindir-"));
    expect(await inspectBinDir(join(dir, "absent"))).toEqual({
      missing: [...KWOK_BINARIES],
      origin: "unknown",
    });
    for (const name of KWOK_BINARIES) await writeFile(join(dir, name), "#!/bin/sh\n", { mode: 0o755 });
    await chmod(join(dir, "kubectl"), 0o644);
    await writeFile(join(dir, ".build-stamp"), "abc\n");
    expect(await inspectBinDir(dir)).toEqual({ missing: ["kubectl"], origin: "build" });
    await writeFile(join(dir, RELEASE_STAMP_FILE), JSON.stringify(stamp()));
    expect(await inspectBinDir(dir)).toMatchObject({ origin: "download", releaseStamp: stamp() });
  });
});

describe("findBuildScript", () => {
  it("finds hack/kube-binaries/build.sh from the sources and from the bundle's directory", async () => {
    const repository = join(import.meta.dirname, "..", "..", "..");
    const script = join(repository, "hack", "kube-binaries", "build.sh");
    expect(findBuildScript(join(repository, "src", "tools"))).toBe(script);
    expect(findBuildScript(join(repository, "dist"))).toBe(script);
    const elsewhere = await mkdtemp(join(tmpdir(), "rc-no-script-"));
    try {
      await mkdir(join(elsewhere, "a", "b"), { recursive: true });
      expect(findBuildScript(join(elsewhere, "a", "b"))).toBeUndefined();
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});
