/**
 * Getting the kwok cluster's binaries: the download (`--binaries download`)
 * against the Go build (`--binaries build`), through the same
 * ensureKubeBinaries the CLI and the Action call, each into a fresh bin
 * directory. The download is served by a local server with the release
 * sites' paths and checksum files (test/support/release-server.ts), so it
 * measures the kit's side (transfer, SHA-256, extraction, install), not a
 * network; the build runs with this machine's Go caches as they are (warm
 * once setup has built the binaries: a cold build is tens of minutes).
 *
 *   npm run bench:binaries [-- --runs 3 --builds 1]
 *
 * Figures are wall-clock on a shared machine: compare within one run.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { zxCommandRunner } from "../src/process/command-runner.js";
import { ensureKubeBinaries, type BinariesMode } from "../src/tools/kube-binaries.js";
import type { Logger } from "../src/util/logger.js";
import { publishBuiltBinaries, startReleaseServer } from "../test/support/release-server.js";

const { values } = parseArgs({
  options: { runs: { type: "string", default: "3" }, builds: { type: "string", default: "1" } },
});
const runs = Number(values.runs);
const builds = Number(values.builds);

const quiet: Logger = { info: () => {}, warn: (message) => console.error(message), debug: () => {} };
const work = await mkdtemp(join(tmpdir(), "rc-bench-binaries-"));
const server = await startReleaseServer();

/** Seconds one ensureKubeBinaries of `mode` takes into a fresh directory. */
async function timed(mode: BinariesMode, index: number): Promise<number> {
  const started = performance.now();
  const result = await ensureKubeBinaries(join(work, `${mode}-${index}`), mode, {
    logger: quiet,
    runner: zxCommandRunner,
    signal: new AbortController().signal,
    env: {
      ...process.env,
      RECONCILE_CONFORMANCE_KUBE_RELEASES: server.baseUrls.kubernetes,
      RECONCILE_CONFORMANCE_GITHUB_RELEASES: server.baseUrls.githubReleases,
      RECONCILE_CONFORMANCE_GITHUB_API: server.baseUrls.githubApi,
    },
  });
  const expected = mode === "download" ? "downloaded" : "built";
  if (result.source !== expected) throw new Error(`${mode}: expected ${expected}, got ${result.source}`);
  return (performance.now() - started) / 1000;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const describe = (values: number[]) =>
  `median ${median(values).toFixed(1)} s (${values.map((v) => v.toFixed(1)).join(", ")})`;

try {
  await publishBuiltBinaries(server, work);
  const downloads: number[] = [];
  for (let i = 0; i < runs; i += 1) downloads.push(await timed("download", i));
  const built: number[] = [];
  for (let i = 0; i < builds; i += 1) built.push(await timed("build", i));
  console.log(`download from a local release server: ${describe(downloads)}`);
  console.log(`Go build with this machine's caches:   ${describe(built)}`);
  console.log(`build / download: ${(median(built) / median(downloads)).toFixed(1)}x`);
} finally {
  await server.close();
  await rm(work, { recursive: true, force: true });
}
