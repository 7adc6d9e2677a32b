import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { QueueSampler } from "../../src/operator/metrics/queue-sampler.js";
import { systemClock } from "../../src/util/clock.js";
import { pollUntil } from "../../src/util/poll.js";

// The queue sampler against a real HTTP server on loopback standing in for an operator's metrics
// endpoint: what it reads, over how many connections, and what it keeps when the endpoint fails.

const SCRAPE = readFileSync(
  new URL("../fixtures/metrics/webapp-operator-scrape.txt", import.meta.url),
  "utf8",
);

let server: Server | undefined;
let sampler: QueueSampler | undefined;

afterEach(async () => {
  sampler?.stop();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = sampler = undefined;
});

/** Serves `answer` for each request; returns the endpoint's URL and what the server saw. */
async function endpoint(answer: (n: number) => { status: number; body: string } | "hang") {
  const seen = { requests: [] as IncomingMessage["headers"][], connections: 0 };
  server = createServer((request, response) => {
    seen.requests.push(request.headers);
    const a = answer(seen.requests.length);
    if (a === "hang") return;
    response.writeHead(a.status, { "content-type": "text/plain" }).end(a.body);
  });
  server.on("connection", () => seen.connections++);
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/metrics`, seen };
}

async function readings(url: string, count: number) {
  sampler = new QueueSampler(url, systemClock);
  sampler.start();
  const started = sampler;
  return pollUntil(
    () =>
      started.readings.length >= count
        ? { done: true, value: started.readings.slice(0, count) }
        : { done: false, reason: `${started.readings.length} reading(s)` },
    { description: `${count} readings`, timeoutMs: 10_000, intervalMs: 20 },
  );
}

describe("QueueSampler", () => {
  it("reads the endpoint uncompressed, over one kept-alive connection", async () => {
    const { url, seen } = await endpoint(() => ({ status: 200, body: SCRAPE }));
    const got = await readings(url, 5);
    expect(got.every((r) => r.error === undefined && Object.keys(r.queues).length > 0)).toBe(true);
    expect(got.map((r) => r.run)).toEqual([1, 1, 1, 1, 1]);
    expect(seen.requests.every((h) => h["accept-encoding"] === "identity")).toBe(true);
    expect(seen.connections).toBe(1);
  });

  it.each([
    ["an error status", () => ({ status: 500, body: "boom" }), /answered 500/],
    ["no answer within its timeout", () => "hang" as const, /no answer within 1000 ms/],
  ])("keeps a failed reading for %s, and reads on", { timeout: 15_000 }, async (_name, failure, message) => {
    const { url } = await endpoint((n) => (n === 1 ? failure() : { status: 200, body: SCRAPE }));
    const [failed, next] = await readings(url, 2);
    expect(failed?.error).toMatch(message);
    expect(next?.error).toBeUndefined();
  });
});
