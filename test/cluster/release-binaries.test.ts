import { createHash } from "node:crypto";
import { access, constants, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseClusterConfig, processEnvironment } from "../../src/cluster/cluster-config.js";
import { KWOK_BINARIES, KwokProvider } from "../../src/cluster/kwok-provider.js";
import { AbortedError, InfrastructureError } from "../../src/errors.js";
import { KubeClient } from "../../src/kube/kube-client.js";
import { zxCommandRunner } from "../../src/process/command-runner.js";
import { downloadKubeBinaries } from "../../src/tools/release-binaries.js";
import { ReleaseErrorCode } from "../../src/tools/release-error-codes.js";
import { PINNED_RELEASES } from "../../src/tools/release-pins.js";
import { readReleaseStamp, RELEASE_STAMP_FILE } from "../../src/tools/release-stamp.js";
import { silentLogger, type Logger } from "../../src/util/logger.js";
import {
  closeServer,
  fileSha256,
  listen,
  platform,
  publishBuiltBinaries,
  sourceDir,
  startReleaseServer,
  tamper,
  type ReleaseServer,
} from "../support/release-server.js";
import { uniqueClusterName } from "../support/kwok-cluster.js";

const { kubeVersion, etcdVersion, kwokVersion } = PINNED_RELEASES;
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** Logger that keeps its lines, to check that progress names sizes. */
function recordingLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => lines.push(m), warn: (m) => lines.push(m), debug: () => {} };
}

/** Entries beside `binDir` that a download left: staging or set-aside directories. */
async function leftovers(binDir: string): Promise<string[]> {
  const entries = await readdir(dirname(binDir)).catch(() => []);
  return entries.filter((entry) => entry.includes(".download-") || entry.includes(".replaced-"));
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the download to fail");
}

describe.skipIf(platform.os !== "linux")("downloadKubeBinaries against a local release server", () => {
  let server: ReleaseServer;
  let workDir: string;
  let served: Map<string, string>;
  let provider: KwokProvider | undefined;

  beforeAll(async () => {
    const missing: string[] = [];
    for (const name of KWOK_BINARIES) {
      await access(join(sourceDir, name), constants.X_OK).catch(() => missing.push(name));
    }
    if (missing.length > 0) {
      throw new Error(`${missing.join(", ")} not in ${sourceDir}: run hack/kube-binaries/build.sh first`);
    }
    workDir = await mkdtemp(join(tmpdir(), "rc-release-binaries-"));
    server = await startReleaseServer();
    served = await publishBuiltBinaries(server, workDir);
  });

  afterAll(async () => {
    await provider?.delete();
    await server?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it("downloads and verifies every binary, replaces an old bin dir whole, and a kwok cluster runs from it", async () => {
    const binDir = join(workDir, "ok", "kube", kubeVersion);
    // An earlier Go build: its files must not survive next to downloaded ones.
    await mkdir(binDir, { recursive: true });
    await writeFile(join(binDir, ".build-stamp"), "old\n");
    await writeFile(join(binDir, "kube-apiserver"), "an old binary");
    const logger = recordingLogger();

    const result = await downloadKubeBinaries(binDir, { logger, baseUrls: server.baseUrls });

    expect(result.binDir).toBe(binDir);
    expect((await readdir(binDir)).sort()).toEqual([RELEASE_STAMP_FILE, ...KWOK_BINARIES].sort());
    for (const name of KWOK_BINARIES) {
      await access(join(binDir, name), constants.X_OK);
      expect({ name, sha256: await fileSha256(join(binDir, name)) }).toEqual({
        name,
        sha256: served.get(name),
      });
    }
    expect(await leftovers(binDir)).toEqual([]);
    // Every download went through its redirect.
    expect(server.requests).toContain(
      `/cdn/dl/release/${kubeVersion}/bin/linux/${platform.arch}/kube-apiserver`,
    );
    expect(server.requests).toContain(
      `/cdn/github/kubernetes-sigs/kwok/releases/download/${kwokVersion}/kwokctl-linux-${platform.arch}`,
    );

    const stamp = await readReleaseStamp(binDir);
    expect(stamp).toEqual(result.stamp);
    expect(stamp?.versions).toEqual(PINNED_RELEASES);
    expect(stamp?.platform).toBe(`linux/${platform.arch}`);
    const stamped = new Map(stamp?.files.map((file) => [file.name, file]));
    expect(stamped.get("kubectl")?.sha256).toBe(served.get("kubectl"));
    expect(stamped.get("etcd")).toMatchObject({
      sha256: served.get("etcd archive"),
      binarySha256: served.get("etcd"),
      member: `etcd-${etcdVersion}-linux-${platform.arch}/etcd`,
    });
    // Progress names each file with its size.
    expect(logger.lines.some((line) => /kube-apiserver: downloading \d+\.\d MiB from http/.test(line))).toBe(
      true,
    );
    expect(logger.lines.some((line) => /etcd: \d+\.\d MiB in \d+\.\ds/.test(line))).toBe(true);

    const config = parseClusterConfig(
      { provider: "kwok", name: uniqueClusterName("rc-release"), binDir },
      processEnvironment(),
    );
    if (config.provider !== "kwok") throw new Error("expected a kwok config");
    provider = new KwokProvider(config, { runner: zxCommandRunner, logger: silentLogger });
    const clusterAccess = await provider.create();
    const client = KubeClient.fromKubeconfig(clusterAccess.kubeconfigPath, clusterAccess.context);
    try {
      const namespaces = (await client.list("v1", "Namespace")).map((namespace) => namespace.metadata?.name);
      expect(namespaces).toEqual(expect.arrayContaining(["default", "kube-system"]));
      const version: unknown = JSON.parse((await client.getRaw("/version")).body);
      expect(version).toMatchObject({ gitVersion: kubeVersion });
    } finally {
      client.close();
    }
  });

  it("refuses a tampered binary, naming both sums, and leaves the bin dir as it was", async () => {
    const path = `/dl/release/${kubeVersion}/bin/linux/${platform.arch}/kubectl`;
    const tampered = tamper(await readFile(join(sourceDir, "kubectl")));
    const binDir = join(workDir, "tampered", "kube", kubeVersion);
    await mkdir(binDir, { recursive: true });
    await writeFile(join(binDir, "kubectl"), "what was here before");
    server.tampered.add(path);
    try {
      const error = await failureOf(
        downloadKubeBinaries(binDir, { logger: silentLogger, baseUrls: server.baseUrls }),
      );

      expect(error).toBeInstanceOf(InfrastructureError);
      expect(error).toMatchObject({ code: ReleaseErrorCode.checksumMismatch });
      const message = String(error);
      expect(message).toContain("kubectl");
      expect(message).toContain(`${server.origin}${path}`);
      expect(message).toContain(sha256(tampered));
      expect(message).toContain(served.get("kubectl"));
    } finally {
      server.tampered.delete(path);
    }
    expect(await readdir(binDir)).toEqual(["kubectl"]);
    expect(await readFile(join(binDir, "kubectl"), "utf8")).toBe("what was here before");
    expect(await leftovers(binDir)).toEqual([]);
  });

  it("names the URL that answered 404, and creates no bin dir", async () => {
    const binDir = join(workDir, "missing-version", "kube", "v1.35.99");
    const error = await failureOf(
      downloadKubeBinaries(binDir, {
        logger: silentLogger,
        baseUrls: server.baseUrls,
        versions: { kubeVersion: "v1.35.99" },
      }),
    );

    expect(error).toMatchObject({ code: ReleaseErrorCode.httpStatus });
    expect(String(error)).toMatch(
      new RegExp(
        `GET ${server.origin}/dl/release/v1\\.35\\.99/bin/linux/${platform.arch}/kube-[a-z-]+\\.sha256 .*404`,
      ),
    );
    await expect(stat(binDir)).rejects.toThrow(/ENOENT/);
    expect(await leftovers(binDir)).toEqual([]);
  });

  it("names a missing asset's URL and where its redirect led", async () => {
    const path = `/github/kubernetes-sigs/kwok/releases/download/${kwokVersion}/kwokctl-linux-${platform.arch}`;
    const route = server.routes.get(path);
    server.routes.delete(path);
    const binDir = join(workDir, "missing-asset", "kube", kubeVersion);
    try {
      const error = await failureOf(
        downloadKubeBinaries(binDir, { logger: silentLogger, baseUrls: server.baseUrls }),
      );

      expect(error).toMatchObject({ code: ReleaseErrorCode.httpStatus });
      expect(String(error)).toContain(
        `GET ${server.origin}${path} (redirected to ${server.origin}/cdn${path}) answered 404`,
      );
    } finally {
      if (route) server.routes.set(path, route);
    }
    await expect(stat(binDir)).rejects.toThrow(/ENOENT/);
    expect(await leftovers(binDir)).toEqual([]);
  });

  it("stops at once when aborted, leaving nothing", async () => {
    const binDir = join(workDir, "aborted", "kube", kubeVersion);
    const controller = new AbortController();
    server.onRequest = (path) => {
      if (path.startsWith("/cdn/")) controller.abort();
    };
    try {
      const error = await failureOf(
        downloadKubeBinaries(binDir, {
          logger: silentLogger,
          baseUrls: server.baseUrls,
          signal: controller.signal,
        }),
      );
      expect(error).toBeInstanceOf(AbortedError);
    } finally {
      server.onRequest = undefined;
    }
    await expect(stat(binDir)).rejects.toThrow(/ENOENT/);
    expect(await leftovers(binDir)).toEqual([]);
  });
});

describe("downloadKubeBinaries without a network", () => {
  const linux = { os: "linux", arch: "amd64" };

  it("reports a refused connection as unreachable", async () => {
    // A port that was just free: nothing listens on it.
    const probe = createServer();
    const origin = await listen(probe);
    await closeServer(probe);
    const workDir = await mkdtemp(join(tmpdir(), "rc-release-refused-"));
    try {
      const error = await failureOf(
        downloadKubeBinaries(join(workDir, "bin"), {
          logger: silentLogger,
          platform: linux,
          baseUrls: { kubernetes: origin, githubReleases: origin, githubApi: origin },
        }),
      );

      expect(error).toBeInstanceOf(InfrastructureError);
      expect(error).toMatchObject({ code: ReleaseErrorCode.unreachable });
      expect(String(error)).toContain("ECONNREFUSED");
      expect(String(error)).toContain(origin);
      expect(await readdir(workDir)).toEqual([]);
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  });

  it("reports a server that never answers as unreachable after the idle timeout", async () => {
    const silent = createServer(() => {
      // Accepts the request and never answers.
    });
    const origin = await listen(silent);
    const workDir = await mkdtemp(join(tmpdir(), "rc-release-silent-"));
    try {
      const started = Date.now();
      const error = await failureOf(
        downloadKubeBinaries(join(workDir, "bin"), {
          logger: silentLogger,
          platform: linux,
          baseUrls: { kubernetes: origin, githubReleases: origin, githubApi: origin },
          idleTimeoutMs: 300,
        }),
      );

      expect(error).toMatchObject({ code: ReleaseErrorCode.unreachable });
      expect(String(error)).toContain("no answer within 0.3s");
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(await readdir(workDir)).toEqual([]);
    } finally {
      await closeServer(silent);
      await rm(workDir, { recursive: true, force: true });
    }
  });
});
