import { KubeConfig } from "@kubernetes/client-node";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiServerConnection } from "../../src/kube/api-server-connection.js";
import { readStream } from "../../src/util/streams.js";

// A server that resets a kept-alive connection when the next request arrives on it: what a server
// that closed an idle connection looks like to a client that reuses it at that moment.
let server: http.Server;
let connection: ApiServerConnection;
const served: string[] = [];

beforeAll(async () => {
  const requestsOn = new WeakMap<object, number>();
  server = http.createServer((request, response) => {
    const count = (requestsOn.get(request.socket) ?? 0) + 1;
    requestsOn.set(request.socket, count);
    if (count > 1) {
      request.socket.resetAndDestroy();
      return;
    }
    served.push(`${request.method} ${request.url}`);
    response.setHeader("Content-Type", "application/json");
    response.end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: "c", server: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }],
    users: [{ name: "u", token: "t" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  connection = new ApiServerConnection(config);
});

afterAll(() => {
  server.close();
});

async function answer(method: string, path: string): Promise<number> {
  const response = await connection.send({ method, path, headers: {} }, method === "GET" ? undefined : "{}");
  await readStream(response);
  return response.statusCode ?? 0;
}

describe("ApiServerConnection on a kept-alive socket the server reset", () => {
  it("sends a read again, once, on a fresh socket; never a write", async () => {
    expect(await answer("GET", "/a")).toBe(200);
    // The next request reuses the kept-alive socket, which the server resets: sent again.
    expect(await answer("GET", "/b")).toBe(200);
    expect(served).toEqual(["GET /a", "GET /b"]);
    // A write on a reset socket fails as it came: the kit never guesses whether it landed.
    await expect(answer("POST", "/c")).rejects.toMatchObject({ code: "ECONNRESET" });
    expect(served).toEqual(["GET /a", "GET /b"]);
  });
});
