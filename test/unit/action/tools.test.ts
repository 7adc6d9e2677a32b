import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { installKind, kindAssetName } from "../../../src/action/tools.js";
import { InfrastructureError } from "../../../src/errors.js";
import { silentLogger } from "../../../src/util/logger.js";

// A stand-in for the release site: the real download path (tool-cache's HTTP client, the checksum,
// the runner's tool cache) against files this test serves, since the test machine has no internet.
const binary = Buffer.from("#!/bin/sh\necho kind v0.33.0-test\n");
const goodSum = `${createHash("sha256").update(binary).digest("hex")}  kind-linux-amd64\n`;
const routes = new Map<string, Buffer | string>();
const requests: string[] = [];
let server: Server;
let baseUrl: string;
let scratch: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    requests.push(request.url ?? "");
    const body = routes.get(request.url ?? "");
    if (body === undefined) {
      response.writeHead(404).end("not found");
      return;
    }
    response.writeHead(200, { "content-type": "application/octet-stream" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/releases`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

beforeEach(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
  scratch = await mkdtemp(join(tmpdir(), "rc-kind-install-"));
  process.env.RUNNER_TOOL_CACHE = join(scratch, "tool-cache");
  process.env.RUNNER_TEMP = join(scratch, "temp");
  routes.clear();
  requests.length = 0;
});

const install = (version = "v0.33.0") =>
  installKind(version, { baseUrl, logger: silentLogger, asset: "kind-linux-amd64" });

describe("installKind", () => {
  it("installs a download whose checksum matches, executable, and takes it from the tool cache next time", async () => {
    routes.set("/releases/v0.33.0/kind-linux-amd64", binary);
    routes.set("/releases/v0.33.0/kind-linux-amd64.sha256sum", goodSum);
    const directory = await install();
    expect(directory.startsWith(join(scratch, "tool-cache", "kind", "0.33.0"))).toBe(true);
    expect(await readFile(join(directory, "kind"))).toEqual(binary);
    expect((await stat(join(directory, "kind"))).mode & 0o111).not.toBe(0);
    expect(requests).toEqual([
      "/releases/v0.33.0/kind-linux-amd64",
      "/releases/v0.33.0/kind-linux-amd64.sha256sum",
    ]);

    requests.length = 0;
    expect(await install()).toBe(directory);
    expect(requests).toEqual([]);
  });

  it("refuses a download whose checksum differs, with both sums and the URL, and caches nothing", async () => {
    routes.set("/releases/v0.33.0/kind-linux-amd64", Buffer.from("tampered"));
    routes.set("/releases/v0.33.0/kind-linux-amd64.sha256sum", goodSum);
    const error = await install().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InfrastructureError);
    expect(String((error as Error).message)).toMatch(
      new RegExp(
        `has SHA-256 ${createHash("sha256").update("tampered").digest("hex")}, but the release publishes ${goodSum.slice(0, 64)}: refusing`,
      ),
    );
    expect((error as Error).message).toContain(`${baseUrl}/v0.33.0/kind-linux-amd64`);
    await expect(stat(join(scratch, "tool-cache", "kind"))).rejects.toThrow();
  });

  it("says which URL it could not download", async () => {
    const error = await install("v9.9.9").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InfrastructureError);
    expect((error as Error).message).toContain(`could not download ${baseUrl}/v9.9.9/kind-linux-amd64`);
  });

  it("refuses a checksum file without a checksum", async () => {
    routes.set("/releases/v0.33.0/kind-linux-amd64", binary);
    routes.set("/releases/v0.33.0/kind-linux-amd64.sha256sum", "<html>rate limited</html>");
    await expect(install()).rejects.toThrow("does not hold a SHA-256 checksum");
  });
});

describe("kindAssetName", () => {
  it("names kind's release binaries by OS and CPU", () => {
    expect(kindAssetName("linux", "x64")).toBe("kind-linux-amd64");
    expect(kindAssetName("darwin", "arm64")).toBe("kind-darwin-arm64");
    expect(() => kindAssetName("win32", "ia32")).toThrow("no release binary for win32/ia32");
  });
});
