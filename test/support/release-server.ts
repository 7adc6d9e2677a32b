import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { copyFile, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { join } from "node:path";
import { defaultKubeBinDir, processEnvironment } from "../../src/cluster/cluster-config.js";
import { zxCommandRunner } from "../../src/process/command-runner.js";
import { currentReleasePlatform } from "../../src/tools/download-plan.js";
import { PINNED_RELEASES, type ReleaseBaseUrls } from "../../src/tools/release-pins.js";

// A local stand-in for the release sites: the binaries hack/kube-binaries/build.sh
// built, served under the paths dl.k8s.io and GitHub use, each behind a
// redirect as on the real sites (dl.k8s.io -> its CDN, GitHub -> its object
// store), with checksum files in the publishers' formats. Linux only: on
// darwin the control plane comes from kwok-ci's releases and etcd from a zip,
// which the unit tests cover.

export const platform = currentReleasePlatform();
const { kubeVersion, etcdVersion, kwokVersion } = PINNED_RELEASES;
/** Where the served binaries are read from: the build's bin directory. */
export const sourceDir = defaultKubeBinDir(processEnvironment());

export async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) {
    if (!Buffer.isBuffer(chunk)) throw new Error(`${path}: read something other than bytes`);
    hash.update(chunk);
  }
  return hash.digest("hex");
}

/** The bytes with one of them, in the middle, inverted: what an attacker or a broken mirror would serve. */
export function tamper(bytes: Buffer): Buffer {
  const middle = bytes.length >> 1;
  bytes.writeUInt8(bytes.readUInt8(middle) ^ 0xff, middle);
  return bytes;
}

/** What the server answers on one path. */
export type Route = { file: string } | { text: string };

export interface ReleaseServer {
  readonly origin: string;
  readonly baseUrls: ReleaseBaseUrls;
  readonly routes: Map<string, Route>;
  /** Paths answered with the file's bytes, one of them changed. */
  readonly tampered: Set<string>;
  /** Every path requested, in order. */
  readonly requests: string[];
  onRequest?: (path: string) => void;
  close(): Promise<void>;
}

export async function startReleaseServer(): Promise<ReleaseServer> {
  const routes = new Map<string, Route>();
  const tampered = new Set<string>();
  const requests: string[] = [];
  const serve = async (request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? "/", "http://local").pathname;
    requests.push(path);
    state.onRequest?.(path);
    // Downloads go through a redirect, as dl.k8s.io's and GitHub's do.
    if (path.startsWith("/dl/") || path.startsWith("/github/")) {
      response.writeHead(302, { location: `/cdn${path}` }).end();
      return;
    }
    const route = routes.get(path.replace(/^\/cdn/, ""));
    if (!route) {
      response.writeHead(404, { "content-type": "text/plain" }).end("Not Found");
      return;
    }
    if ("text" in route) {
      response.writeHead(200, { "content-length": Buffer.byteLength(route.text) }).end(route.text);
      return;
    }
    if (tampered.has(path.replace(/^\/cdn/, ""))) {
      const bytes = tamper(await readFile(route.file));
      response.writeHead(200, { "content-length": bytes.length }).end(bytes);
      return;
    }
    const { size } = await stat(route.file);
    response.writeHead(200, { "content-length": size, "content-type": "application/octet-stream" });
    createReadStream(route.file).pipe(response);
  };
  const server = createServer((request, response) => {
    serve(request, response).catch((error: unknown) =>
      response.destroy(error instanceof Error ? error : undefined),
    );
  });
  const origin = await listen(server);
  const state: ReleaseServer = {
    origin,
    baseUrls: {
      kubernetes: `${origin}/dl/release`,
      githubReleases: `${origin}/github`,
      githubApi: `${origin}/api`,
    },
    routes,
    tampered,
    requests,
    close: () => closeServer(server),
  };
  return state;
}

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the server has no TCP address");
  return `http://127.0.0.1:${address.port}`;
}

export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Publishes the built binaries the way each project does; returns each served file's SHA-256 by bin name. */
export async function publishBuiltBinaries(
  server: ReleaseServer,
  workDir: string,
): Promise<Map<string, string>> {
  const { os, arch } = platform;
  const sums = new Map<string, string>();
  for (const name of ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"]) {
    const file = join(sourceDir, name);
    const digest = await fileSha256(file);
    const path = `/dl/release/${kubeVersion}/bin/${os}/${arch}/${name}`;
    server.routes.set(path, { file });
    server.routes.set(`${path}.sha256`, { text: digest }); // the bare digest, no newline, as WriteChecksums writes it
    sums.set(name, digest);
  }

  // etcd: the release's directory layout, packed as build-binary.sh does (tar cfz <dir>.tar.gz <dir>).
  const etcdDir = `etcd-${etcdVersion}-${os}-${arch}`;
  await mkdir(join(workDir, "etcd-layout", etcdDir), { recursive: true });
  await copyFile(join(sourceDir, "etcd"), join(workDir, "etcd-layout", etcdDir, "etcd"));
  await writeFile(join(workDir, "etcd-layout", etcdDir, "README.md"), "etcd\n");
  const archive = join(workDir, `${etcdDir}.tar.gz`);
  const packed = await zxCommandRunner.run([
    "tar",
    "-czf",
    archive,
    "-C",
    join(workDir, "etcd-layout"),
    etcdDir,
  ]);
  if (packed.exitCode !== 0) throw new Error(`tar failed: ${packed.stderr}`);
  const etcdRelease = `/github/etcd-io/etcd/releases/download/${etcdVersion}`;
  server.routes.set(`${etcdRelease}/${etcdDir}.tar.gz`, { file: archive });
  const decoy = "0".repeat(64);
  server.routes.set(`${etcdRelease}/SHA256SUMS`, {
    text: [
      `${decoy}  etcd-${etcdVersion}-darwin-${arch}.zip`,
      `${await fileSha256(archive)}  ${etcdDir}.tar.gz`,
      `${decoy}  etcd-${etcdVersion}-windows-amd64.zip`,
    ].join("\n"),
  });
  sums.set("etcd", await fileSha256(join(sourceDir, "etcd")));
  sums.set("etcd archive", await fileSha256(archive));

  // kwok: bare assets; the digests are in GitHub's release record.
  const assets: { name: string; digest: string; size: number }[] = [
    { name: `kwok-windows-${arch}.exe`, digest: `sha256:${decoy}`, size: 1 },
  ];
  for (const name of ["kwok", "kwokctl"]) {
    const file = join(sourceDir, name);
    const digest = await fileSha256(file);
    const asset = `${name}-${os}-${arch}`;
    server.routes.set(`/github/kubernetes-sigs/kwok/releases/download/${kwokVersion}/${asset}`, { file });
    assets.push({ name: asset, digest: `sha256:${digest}`, size: (await stat(file)).size });
    sums.set(name, digest);
  }
  server.routes.set(`/api/repos/kubernetes-sigs/kwok/releases/tags/${kwokVersion}`, {
    text: JSON.stringify({ tag_name: kwokVersion, assets }),
  });
  return sums;
}
