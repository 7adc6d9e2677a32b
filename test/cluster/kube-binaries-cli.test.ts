import { access, constants, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KWOK_BINARIES } from "../../src/cluster/kwok-provider.js";
import { ExitCode } from "../../src/errors.js";
import { PINNED_RELEASES } from "../../src/tools/release-pins.js";
import { RELEASE_STAMP_FILE } from "../../src/tools/release-stamp.js";
import { uniqueClusterName } from "../support/kwok-cluster.js";
import {
  closeServer,
  fileSha256,
  listen,
  platform,
  publishBuiltBinaries,
  sourceDir,
  startReleaseServer,
  type ReleaseServer,
} from "../support/release-server.js";
import { runCli, type CliRun } from "../support/run-cli.js";

// How the CLI gets the kwok cluster's binaries (`--binaries`, default auto),
// run as a user runs it (dist/cli.js), against a local server that serves the
// release files under the publishers' paths (the mirror variables point the
// kit at it), and against a port where nothing listens (unreachable).

const { kubeVersion } = PINNED_RELEASES;

/** The mirror variables, all pointing at one origin. */
function mirrorsAt(origin: { kubernetes: string; githubReleases: string; githubApi: string }) {
  return {
    RECONCILE_CONFORMANCE_KUBE_RELEASES: origin.kubernetes,
    RECONCILE_CONFORMANCE_GITHUB_RELEASES: origin.githubReleases,
    RECONCILE_CONFORMANCE_GITHUB_API: origin.githubApi,
  };
}

/** `cluster create` into `binDir`, then `cluster delete` of what it created (whatever the create did). */
async function createAndDelete(
  binDir: string,
  env: Record<string, string>,
  extra: string[] = [],
): Promise<{ create: CliRun; deleted: CliRun }> {
  const name = uniqueClusterName("rc-binaries");
  const create = await runCli(["cluster", "create", "--name", name, "--bin-dir", binDir, ...extra], { env });
  const deleted = await runCli(["cluster", "delete", "--name", name, "--bin-dir", binDir]);
  return { create, deleted };
}

describe.skipIf(platform.os !== "linux")("the CLI's --binaries against a local release server", () => {
  let server: ReleaseServer;
  let workDir: string;
  let served: Map<string, string>;
  let env: Record<string, string>;

  beforeAll(async () => {
    for (const name of KWOK_BINARIES) await access(join(sourceDir, name), constants.X_OK);
    workDir = await mkdtemp(join(tmpdir(), "rc-binaries-cli-"));
    server = await startReleaseServer();
    served = await publishBuiltBinaries(server, workDir);
    env = mirrorsAt(server.baseUrls);
  });

  afterAll(async () => {
    await server?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it("doctor says a missing bin dir will be downloaded, and why", async () => {
    const binDir = join(workDir, "doctor", "kube", kubeVersion);
    const doctor = await runCli(["doctor", "--bin-dir", binDir], { env });

    const line = doctor.stdout.split("\n").find((text) => text.includes("kube binaries"));
    expect(line).toMatch(/^ok\s+kube binaries\s+the next run downloads the pinned releases/);
    expect(line).toContain(`kubectl not in ${binDir}; the release sites answer`);
    // It only asked; nothing was downloaded.
    await expect(stat(binDir)).rejects.toThrow(/ENOENT/);
  });

  it("auto downloads and verifies what is missing, and the cluster runs from it; the next create uses it as it is", async () => {
    const binDir = join(workDir, "auto", "kube", kubeVersion);
    const first = await createAndDelete(binDir, env);

    expect(first.create.code, first.create.stderr).toBe(ExitCode.ok);
    expect(first.create.stderr).toContain(
      `kube binaries: downloading ${KWOK_BINARIES.length} release files for linux/${platform.arch}`,
    );
    expect(first.create.stderr).toMatch(/kube binaries: [\d.]+ MiB downloaded and verified in [\d.]+s/);
    expect(first.create.stderr).not.toContain("building");
    expect(first.create.stdout.trim().split("\n").at(-1)).toMatch(/kubeconfig\.yaml$/);
    expect(first.deleted.code, first.deleted.stderr).toBe(ExitCode.ok);
    expect((await readdir(binDir)).sort()).toEqual([RELEASE_STAMP_FILE, ...KWOK_BINARIES].sort());
    for (const name of KWOK_BINARIES) {
      expect({ name, sha256: await fileSha256(join(binDir, name)) }).toEqual({
        name,
        sha256: served.get(name),
      });
    }

    const requestsBefore = server.requests.length;
    const second = await createAndDelete(binDir, env);
    expect(second.create.code, second.create.stderr).toBe(ExitCode.ok);
    expect(second.create.stderr).toContain(
      `kube binaries: downloaded releases (Kubernetes ${kubeVersion}, etcd ${PINNED_RELEASES.etcdVersion}, kwok ${PINNED_RELEASES.kwokVersion} for linux/${platform.arch}) in ${binDir}`,
    );
    expect(server.requests.length).toBe(requestsBefore);

    const doctor = await runCli(["doctor", "--bin-dir", binDir], { env });
    expect(doctor.stdout).toMatch(
      new RegExp(
        `ok\\s+kube binaries\\s+downloaded releases .* in ${binDir} \\(Kubernetes ${kubeVersion}\\)`,
      ),
    );
  }, 120_000);

  it("refuses a tampered download with both sums, and does not build instead", async () => {
    const path = `/dl/release/${kubeVersion}/bin/linux/${platform.arch}/kube-scheduler`;
    const binDir = join(workDir, "tampered", "kube", kubeVersion);
    server.tampered.add(path);
    let run: CliRun;
    try {
      run = (await createAndDelete(binDir, env)).create;
    } finally {
      server.tampered.delete(path);
    }

    expect(run.code, run.stderr).toBe(ExitCode.infrastructure);
    expect(run.stderr).toContain(`error: kube binaries: kube-scheduler`);
    expect(run.stderr).toContain(`${server.origin}${path}`);
    expect(run.stderr).toContain(served.get("kube-scheduler"));
    expect(run.stderr).not.toContain("Go modules");
    expect(run.stderr).not.toContain("cluster ready");
    await expect(stat(binDir)).rejects.toThrow(/ENOENT/);
  }, 120_000);
});

describe.skipIf(platform.os !== "linux")("the CLI's --binaries with the release sites unreachable", () => {
  let workDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), "rc-binaries-offline-"));
    // A port that was just free: nothing listens on it, so every connection is refused.
    const probe = createServer();
    const origin = await listen(probe);
    await closeServer(probe);
    env = mirrorsAt({ kubernetes: origin, githubReleases: origin, githubApi: origin });
  });

  afterAll(async () => {
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it("doctor says auto will build, and that download alone cannot work", async () => {
    const binDir = join(workDir, "doctor", "kube", kubeVersion);
    const auto = await runCli(["doctor", "--bin-dir", binDir], { env });
    expect(auto.stdout).toMatch(
      /warning\s+kube binaries\s+.*the release downloads are unreachable \(http:\/\/127\.0\.0\.1:\d+\/.*kubectl\.sha256: ECONNREFUSED\): the next run builds them from Go modules instead/,
    );
    expect(auto.code).toBe(ExitCode.ok);

    const download = await runCli(["doctor", "--bin-dir", binDir, "--binaries", "download"], { env });
    expect(download.stdout).toMatch(/MISSING\s+kube binaries\s+--binaries download: .*does not build/);
    expect(download.code).toBe(ExitCode.infrastructure);
  });

  it("--binaries download fails naming the refused connection and the ways out", async () => {
    const binDir = join(workDir, "download", "kube", kubeVersion);
    const { create } = await createAndDelete(binDir, env, ["--binaries", "download"]);

    expect(create.code, create.stderr).toBe(ExitCode.infrastructure);
    expect(create.stderr).toContain("ECONNREFUSED");
    expect(create.stderr).toContain("--binaries download does not fall back to the build");
    expect(create.stderr).toContain("RECONCILE_CONFORMANCE_KUBE_RELEASES");
    expect(create.stderr).not.toContain("building");
    await expect(stat(binDir)).rejects.toThrow(/ENOENT/);
  });

  it("auto builds them from Go modules instead, says so, and the cluster runs from the build", async () => {
    const binDir = join(workDir, "auto", "kube", kubeVersion);
    const { create, deleted } = await createAndDelete(binDir, env);

    expect(create.code, create.stderr).toBe(ExitCode.ok);
    expect(create.stderr).toMatch(
      /kube binaries: the release downloads are unreachable \(.*ECONNREFUSED.*\): building them from Go modules instead/,
    );
    // The build's own progress reaches the user.
    expect(create.stderr).toContain(
      `kube binaries: building Kubernetes ${kubeVersion}, etcd and kwok into ${binDir}`,
    );
    expect(create.stderr).toMatch(/kube binaries: built in \d+s; ready in /);
    expect(create.stderr).toContain("cluster ready");
    expect(deleted.code, deleted.stderr).toBe(ExitCode.ok);
    expect((await readdir(binDir)).sort()).toEqual([".build-stamp", ...KWOK_BINARIES].sort());
  }, 600_000);
});
