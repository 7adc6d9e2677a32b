import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, utimes, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  acquireLock,
  candidatePorts,
  ephemeralPortRange,
  FALLBACK_EPHEMERAL_RANGE,
  isListening,
  isStale,
  leaseFreePort,
  OPERATOR_PORT_WINDOW,
  parsePortRange,
  pickFreePorts,
  PORT_WINDOW,
  portTakenIn,
  readOwner,
  waitForListening,
  withLock,
} from "../../src/cluster/port-reservation.js";
import { AbortedError, InfrastructureError } from "../../src/errors.js";
import { processTableSource } from "../../src/process/process-table.js";

describe("parsePortRange", () => {
  it("reads the kernel's format: two numbers separated by a tab", () => {
    expect(parsePortRange("32768\t60999\n")).toEqual({ first: 32768, last: 60999 });
    expect(parsePortRange("  1024   65535 ")).toEqual({ first: 1024, last: 65535 });
  });

  it("rejects anything that is not two valid ports in order", () => {
    for (const text of ["", "32768", "32768 60999 1", "a b", "60999 32768", "0 100", "1024 70000", "-1 5"]) {
      expect(parsePortRange(text), text).toBeUndefined();
    }
  });

  it("falls back to a conservative range where the kernel does not say", async () => {
    expect(await ephemeralPortRange("/nonexistent/ip_local_port_range")).toEqual(FALLBACK_EPHEMERAL_RANGE);
    const dir = await mkdtemp(join(tmpdir(), "rc-range-"));
    await writeFile(join(dir, "range"), "garbage\n");
    expect(await ephemeralPortRange(join(dir, "range"))).toEqual(FALLBACK_EPHEMERAL_RANGE);
    await writeFile(join(dir, "range"), "40000\t50000\n");
    expect(await ephemeralPortRange(join(dir, "range"))).toEqual({ first: 40000, last: 50000 });
  });
});

describe("candidatePorts", () => {
  const ephemeral = { first: 32768, last: 60999 };

  it("walks the window from the start upward and wraps around, each port once", () => {
    expect(candidatePorts({ window: { first: 100, last: 105 }, ephemeral, start: 103 })).toEqual([
      103, 104, 105, 100, 101, 102,
    ]);
  });

  it("leaves out the ephemeral range, where an outgoing connection can take a port at any moment", () => {
    const ports = candidatePorts({
      window: { first: 32760, last: 32775 },
      ephemeral,
      start: 32765,
    });
    expect(ports).toEqual([32765, 32766, 32767, 32760, 32761, 32762, 32763, 32764]);
    expect(candidatePorts({ window: { first: 40000, last: 40010 }, ephemeral })).toEqual([]);
  });

  it("leaves out excluded ports and clamps a start outside the window", () => {
    expect(
      candidatePorts({ window: { first: 10, last: 14 }, ephemeral, start: 99, exclude: new Set([12, 14]) }),
    ).toEqual([10, 11, 13]);
    expect(candidatePorts({ window: { first: 10, last: 12 }, ephemeral, start: 1 })).toEqual([10, 11, 12]);
  });

  it("has thousands of candidates in the default window with Linux's default range", () => {
    const ports = candidatePorts({ window: PORT_WINDOW, ephemeral });
    expect(ports.length).toBe(10_000);
    expect(ports.every((port) => port < ephemeral.first)).toBe(true);
  });
});

/** Listens on 127.0.0.1:port (0 = any); the test closes it. */
async function listen(port: number): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen({ host: "127.0.0.1", port }, resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return { server, port: address.port };
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe("pickFreePorts", () => {
  it("skips a port somebody listens on and returns distinct ports", async () => {
    const taken = await listen(0);
    try {
      const window = { first: taken.port, last: taken.port + 20 };
      const ports = await pickFreePorts(3, { window, ephemeral: { first: 1, last: 1 }, start: taken.port });
      expect(ports).not.toContain(taken.port);
      expect(new Set(ports).size).toBe(3);
      // Every probe is closed again: the ports are free for the components.
      for (const port of ports) {
        const { server } = await listen(port);
        await close(server);
      }
    } finally {
      await close(taken.server);
    }
  });

  it("fails clearly when the window has too few free ports", async () => {
    const taken = await listen(0);
    try {
      const window = { first: taken.port, last: taken.port };
      const error = await pickFreePorts(1, { window, ephemeral: { first: 1, last: 1 } }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InfrastructureError);
      expect(String(error)).toContain(`found 0 of 1 free ports on 127.0.0.1 in ${taken.port}-${taken.port}`);
    } finally {
      await close(taken.server);
    }
  });

  it("picks outside the kernel's ephemeral range by default", async () => {
    const ephemeral = await ephemeralPortRange();
    const ports = await pickFreePorts(6);
    expect(ports).toHaveLength(6);
    for (const port of ports) {
      expect(port < ephemeral.first || port > ephemeral.last).toBe(true);
      expect(port >= PORT_WINDOW.first && port <= PORT_WINDOW.last).toBe(true);
    }
  });
});

describe("leaseFreePort", () => {
  it("hands a leased port to nobody else in this process until it is released, though it stays unbound", async () => {
    const lease = await leaseFreePort();
    expect(lease.port >= OPERATOR_PORT_WINDOW.first && lease.port <= OPERATOR_PORT_WINDOW.last).toBe(true);
    // Every later pick starts at the leased port and must walk past it.
    const others = await Promise.all(
      [1, 2, 3].map(() => pickFreePorts(1, { window: OPERATOR_PORT_WINDOW, start: lease.port })),
    );
    expect(others.flat()).not.toContain(lease.port);
    lease.release();
    const again = await pickFreePorts(1, { window: { first: lease.port, last: lease.port } });
    expect(again).toEqual([lease.port]);
  });
});

describe("portTakenIn", () => {
  it("reads a bind failure on that very port, in Go's words or Node's", () => {
    const go = new Error(
      "operator exited (1) before it watched webapps; its log ends with: failed to create listener: listen tcp 127.0.0.1:24358: bind: address already in use",
    );
    expect(portTakenIn(go, 24358)).toBe(true);
    expect(portTakenIn(go, 2435)).toBe(false);
    expect(portTakenIn(go, 4358)).toBe(false);
    expect(portTakenIn(new Error("listen EADDRINUSE: address already in use 127.0.0.1:9443"), 9443)).toBe(
      true,
    );
    expect(portTakenIn(new Error("operator exited (1): open tls.crt: no such file (port 9443)"), 9443)).toBe(
      false,
    );
  });
});

describe("waitForListening", () => {
  it("returns once every port accepts connections, and names those that never do", async () => {
    const open = await listen(0);
    const closed = await listen(0);
    await close(closed.server);
    try {
      expect(await isListening("127.0.0.1", open.port)).toBe(true);
      expect(await isListening("127.0.0.1", closed.port)).toBe(false);
      await waitForListening({ web: open.port }, { timeoutMs: 2_000 });
      const error = await waitForListening({ web: open.port, etcd: closed.port }, { timeoutMs: 200 }).catch(
        (e: unknown) => e,
      );
      expect(String(error)).toContain(`not listening yet: etcd on 127.0.0.1:${closed.port}`);
      expect(String(error)).not.toContain("web on");
    } finally {
      await close(open.server);
    }
  });
});

async function lockPath(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), "rc-lock-")), "cache", "ports.lock");
}

/** A pid that certainly belongs to no running process: a child that has exited and been reaped. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  if (child.pid === undefined) throw new Error("could not start a child");
  return child.pid;
}

describe("acquireLock", () => {
  it("creates the lock with its owner and removes it, and nothing else, on release", async () => {
    const path = await lockPath();
    const lock = await acquireLock(path, { timeoutMs: 1_000, purpose: "test" });
    expect(await readOwner(path)).toMatchObject({ pid: process.pid, hostname: hostname(), purpose: "test" });
    await lock.release();
    await lock.release(); // twice is harmless
    expect(await readOwner(path)).toBeUndefined();
    expect(await readdir(join(path, ".."))).toEqual([]);
  });

  it("makes the second taker wait until the first releases, and tells it who holds the lock", async () => {
    const path = await lockPath();
    const order: string[] = [];
    const held: string[] = [];
    const first = await acquireLock(path, { timeoutMs: 1_000, purpose: "first" });
    const second = withLock(
      path,
      { timeoutMs: 5_000, purpose: "second", intervalMs: 5, onWait: (holder) => held.push(holder) },
      () => {
        order.push("second");
        return Promise.resolve();
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    order.push("first releases");
    await first.release();
    await second;
    expect(order).toEqual(["first releases", "second"]);
    expect(held).toHaveLength(1);
    expect(held[0]).toContain(`held by pid ${process.pid}`);
    expect(held[0]).toContain("(first)");
    expect(await readOwner(path)).toBeUndefined();
  });

  it("lets exactly one of many simultaneous takers in at a time", async () => {
    const path = await lockPath();
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        withLock(path, { timeoutMs: 10_000, purpose: `taker ${index}`, intervalMs: 2 }, async () => {
          most = Math.max(most, ++inside);
          await new Promise((resolve) => setTimeout(resolve, 10));
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
  });

  it("times out naming the lock and its holder", async () => {
    const path = await lockPath();
    const first = await acquireLock(path, { timeoutMs: 1_000, purpose: 'kwok cluster "a" starting' });
    try {
      const error = await acquireLock(path, { timeoutMs: 100, purpose: "second", intervalMs: 10 }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InfrastructureError);
      expect(String(error)).toContain(`waiting for the lock ${path}`);
      expect(String(error)).toContain(
        `held by pid ${process.pid} on ${hostname()} (kwok cluster "a" starting)`,
      );
      // The waiter leaves nothing behind; the holder's lock is intact.
      expect(await readdir(join(path, ".."))).toEqual(["ports.lock"]);
      expect((await readOwner(path))?.purpose).toBe('kwok cluster "a" starting');
    } finally {
      await first.release();
    }
  });

  it("stops waiting when aborted", async () => {
    const path = await lockPath();
    const first = await acquireLock(path, { timeoutMs: 1_000, purpose: "first" });
    try {
      const controller = new AbortController();
      const waiting = acquireLock(path, { timeoutMs: 10_000, purpose: "second", signal: controller.signal });
      setTimeout(() => controller.abort(), 30);
      await expect(waiting).rejects.toBeInstanceOf(AbortedError);
      expect(await readdir(join(path, ".."))).toEqual(["ports.lock"]);
    } finally {
      await first.release();
    }
  });

  it("removes a lock whose owner is no longer running", async () => {
    const path = await lockPath();
    await mkdir(path, { recursive: true });
    const stale = {
      pid: deadPid(),
      hostname: hostname(),
      token: "dead",
      acquiredAt: "2020-01-01T00:00:00.000Z",
      purpose: "crashed",
    };
    await writeFile(join(path, "owner.json"), JSON.stringify(stale));
    expect(isStale(stale)).toBe(true);
    const lock = await acquireLock(path, { timeoutMs: 2_000, purpose: "after a crash", intervalMs: 5 });
    expect((await readOwner(path))?.purpose).toBe("after a crash");
    await lock.release();
  });

  it("judges a reused pid by its start time, and never judges another host's lock", () => {
    const base = { token: "t", acquiredAt: "x", purpose: "p" };
    expect(isStale({ ...base, pid: process.pid, hostname: hostname() })).toBe(false);
    // "1" is a start time in /proc's clock ticks; ps's dates cannot be compared with it, and an owner
    // whose start time cannot be compared is taken to be the live process.
    expect(isStale({ ...base, pid: process.pid, hostname: hostname(), startTime: "1" })).toBe(
      processTableSource() === "proc",
    );
    expect(isStale({ ...base, pid: deadPid(), hostname: `not-${hostname()}` })).toBe(false);
  });

  it("takes over an empty lock directory (no owner, so no lock)", async () => {
    const path = await lockPath();
    await mkdir(path, { recursive: true });
    const lock = await acquireLock(path, { timeoutMs: 1_000, purpose: "x" });
    expect((await readOwner(path))?.purpose).toBe("x");
    await lock.release();
  });

  it("removes a lock directory with an unreadable owner only once it is old", async () => {
    const path = await lockPath();
    await mkdir(path, { recursive: true });
    await writeFile(join(path, "owner.json"), "{");
    const error = await acquireLock(path, { timeoutMs: 100, purpose: "x", intervalMs: 10 }).catch(
      (e: unknown) => e,
    );
    expect(String(error)).toContain("the lock has no readable owner");
    const old = new Date(Date.now() - 60_000);
    await utimes(path, old, old);
    const lock = await acquireLock(path, { timeoutMs: 2_000, purpose: "y", intervalMs: 5 });
    expect((await readOwner(path))?.purpose).toBe("y");
    await lock.release();
  });
});
