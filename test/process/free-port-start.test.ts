import { describe, expect, it } from "vitest";
import { startOnFreePort } from "../../src/operator/free-port-start.js";

// The first start of an operator told a free port, with real leased ports: a start that fails
// because its port was taken is tried again on another, any other failure stands at once.

describe("startOnFreePort", () => {
  it("starts again on another port when the first was taken before the bind, discarding the failed start", async () => {
    const started: number[] = [];
    const discarded: number[] = [];
    const made = await startOnFreePort({
      make: (lease) => ({ port: lease.port }),
      start: ({ port }) => {
        started.push(port);
        return started.length === 1
          ? Promise.reject(new Error(`listen tcp 127.0.0.1:${port}: bind: address already in use`))
          : Promise.resolve();
      },
      discard: ({ port }) => {
        discarded.push(port);
        return Promise.resolve();
      },
    });
    expect(started).toHaveLength(2);
    expect(started[0]).not.toBe(started[1]);
    expect(discarded).toEqual([started[0]]);
    expect(made.port).toBe(started[1]);
  });

  it("lets any other failure stand, and the last one after every try", async () => {
    let tries = 0;
    const other = await startOnFreePort({
      make: (lease) => lease.port,
      start: () => {
        tries++;
        return Promise.reject(
          new Error("open /tmp/k8s-webhook-server/serving-certs/tls.crt: no such file or directory"),
        );
      },
      discard: () => Promise.resolve(),
    }).catch((e: unknown) => e);
    expect(String(other)).toMatch(/tls\.crt/);
    expect(tries).toBe(1);

    const ports: number[] = [];
    const taken = await startOnFreePort({
      make: (lease) => lease.port,
      start: (port) => {
        ports.push(port);
        return Promise.reject(new Error(`listen tcp 127.0.0.1:${port}: bind: address already in use`));
      },
      discard: () => Promise.resolve(),
      tries: 3,
    }).catch((e: unknown) => e);
    expect(String(taken)).toContain(`127.0.0.1:${ports.at(-1)}: bind: address already in use`);
    expect(new Set(ports).size).toBe(3);
  });
});
