import { randomBytes, randomInt } from "node:crypto";
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { createConnection, createServer, type Server } from "node:net";
import { dirname, join } from "node:path";
import { currentOwner, ownerState, type ProcessOwner } from "../cleanup/ownership.js";
import { describeError, InfrastructureError } from "../errors.js";
import { pollUntil, PollTimeoutError, type PollResult } from "../util/poll.js";

/**
 * Port reservation for local clusters: a machine-wide lock, and free loopback
 * ports picked under it. Two clusters started at once must never be handed
 * the same port, so whoever starts one takes the lock, picks its ports, and
 * keeps the lock until its components listen on them; the next one then finds
 * those ports taken. Picking is by actually binding each candidate, so ports
 * held by anything else on the machine are skipped too.
 */

/** An inclusive range of TCP ports. */
export interface PortRange {
  readonly first: number;
  readonly last: number;
}

/** Where Linux keeps the range it draws the local port of outgoing connections from. */
export const EPHEMERAL_RANGE_FILE = "/proc/sys/net/ipv4/ip_local_port_range";

/**
 * Assumed ephemeral range where the kernel does not say (not Linux): Linux's
 * default start, up to the top, so it also covers the IANA range
 * (49152-65535) that macOS, the BSDs and Windows use.
 */
export const FALLBACK_EPHEMERAL_RANGE: PortRange = { first: 32768, last: 65535 };

/**
 * Where the kit looks for ports. Above the well-known services (3000, 5432,
 * 8080, 9090 ...), which might start later and find their port taken, and
 * below 30000 to stay clear of kwokctl's own probing downward from 32766,
 * which a plain kwokctl run on the same machine still does without any lock.
 */
export const PORT_WINDOW: PortRange = { first: 20000, last: 29999 };

/**
 * Where ports for the operator's own servers (metrics, webhooks) are picked:
 * apart from PORT_WINDOW, so that a pick made without the port lock (an
 * operator's port is bound whenever its process gets there) never takes a
 * port a cluster start picked under the lock and has not bound yet.
 */
export const OPERATOR_PORT_WINDOW: PortRange = { first: 15000, last: 19999 };

/** How long a port picked for someone else stays out of this process's later picks, unless leased longer. */
export const PICK_LEASE_MS = 60_000;

/**
 * Ports this process has handed out, with when they may be handed out again
 * (Infinity: until released). A probe finds a port free between its pick and
 * the bind of whoever it is for, and again while that one is down (a crash
 * and its restart): without this, two scenarios side by side could be given
 * the same port.
 */
const handedOut = new Map<number, number>();

function leased(port: number, now: number): boolean {
  const until = handedOut.get(port);
  if (until === undefined) return false;
  if (until > now) return true;
  handedOut.delete(port);
  return false;
}

/** Parses `ip_local_port_range` ("32768\t60999\n"); undefined when it is not two valid ports in order. */
export function parsePortRange(text: string): PortRange | undefined {
  const fields = text.trim().split(/\s+/);
  if (fields.length !== 2 || !fields.every((field) => /^\d+$/.test(field))) return undefined;
  const [first, last] = fields.map(Number);
  if (first === undefined || last === undefined) return undefined;
  if (first < 1 || last > 65535 || first > last) return undefined;
  return { first, last };
}

/** The kernel's ephemeral port range, or FALLBACK_EPHEMERAL_RANGE where it cannot be read. */
export async function ephemeralPortRange(file = EPHEMERAL_RANGE_FILE): Promise<PortRange> {
  const text = await readFile(file, "utf8").catch(() => undefined);
  return (text === undefined ? undefined : parsePortRange(text)) ?? FALLBACK_EPHEMERAL_RANGE;
}

/**
 * Ports to try, in order: those of `window` outside `ephemeral` (a port in
 * the ephemeral range can be taken by any outgoing connection between our
 * check and the component's bind) and not in `exclude`, from `start` upward,
 * wrapping around to the bottom of the window.
 */
export function candidatePorts(options: {
  readonly window: PortRange;
  readonly ephemeral: PortRange;
  readonly start?: number;
  readonly exclude?: ReadonlySet<number>;
}): number[] {
  const { window, ephemeral, exclude } = options;
  const start = Math.min(Math.max(options.start ?? window.first, window.first), window.last);
  const usable = (port: number) =>
    (port < ephemeral.first || port > ephemeral.last) && !(exclude?.has(port) ?? false);
  const ports: number[] = [];
  for (let port = start; port <= window.last; port++) if (usable(port)) ports.push(port);
  for (let port = window.first; port < start; port++) if (usable(port)) ports.push(port);
  return ports;
}

export interface PickPortsOptions {
  /** Address the ports must be free on; the one the components will bind. Default 127.0.0.1. */
  readonly host?: string;
  /** Default PORT_WINDOW. */
  readonly window?: PortRange;
  /** Default: read from the kernel (ephemeralPortRange). */
  readonly ephemeral?: PortRange;
  /**
   * First candidate; random by default, so that pickers not sharing a lock
   * (two kits with different cache directories) do not walk the same
   * sequence in step.
   */
  readonly start?: number;
}

/**
 * Picks `count` distinct ports that are free on `host`, by binding each
 * candidate; every probe stays bound until all are found, so none is picked
 * twice, and all are closed before this returns. The ports stay free only as
 * long as nobody else binds them: call it under the port lock, and keep the
 * lock until whatever the ports are for listens on them.
 */
export async function pickFreePorts(count: number, options: PickPortsOptions = {}): Promise<number[]> {
  const host = options.host ?? "127.0.0.1";
  const window = options.window ?? PORT_WINDOW;
  const ephemeral = options.ephemeral ?? (await ephemeralPortRange());
  const start = options.start ?? randomInt(window.first, window.last + 1);
  const candidates = candidatePorts({ window, ephemeral, start });
  const held: { port: number; server: Server }[] = [];
  try {
    for (const port of candidates) {
      if (held.length === count) break;
      if (leased(port, Date.now())) continue;
      const server = await listenIfFree(host, port);
      if (server) held.push({ port, server });
    }
    if (held.length < count) {
      throw new InfrastructureError(
        "cluster/no-free-ports",
        `found ${held.length} of ${count} free ports on ${host} in ${window.first}-${window.last} outside the ephemeral range ${ephemeral.first}-${ephemeral.last}` +
          " (a port in the ephemeral range can be taken by any outgoing connection before the component binds it;" +
          ` if the range covers ${window.first}-${window.last}, narrow it: sysctl net.ipv4.ip_local_port_range)`,
      );
    }
    const until = Date.now() + PICK_LEASE_MS;
    for (const { port } of held) handedOut.set(port, until);
    return held.map((entry) => entry.port);
  } finally {
    await Promise.all(held.map((entry) => closeServer(entry.server)));
  }
}

/** A listening server on host:port, or undefined when the port is taken. */
function listenIfFree(host: string, port: number): Promise<Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE" || error.code === "EACCES") resolve(undefined);
      else reject(error);
    });
    server.listen({ host, port, exclusive: true }, () => resolve(server));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A free port kept out of this process's picks until it is released. */
export interface PortLease {
  readonly port: number;
  release(): void;
}

/**
 * One free port for an operator's own server (OPERATOR_PORT_WINDOW unless
 * told otherwise), kept out of this process's later picks until released
 * (the operator that was told it has stopped for good).
 */
export async function leaseFreePort(options: PickPortsOptions = {}): Promise<PortLease> {
  const [port] = await pickFreePorts(1, { window: OPERATOR_PORT_WINDOW, ...options });
  if (port === undefined) throw new Error("pickFreePorts(1) returned no port");
  handedOut.set(port, Infinity);
  return {
    port,
    release: () => {
      if (handedOut.get(port) === Infinity) handedOut.delete(port);
    },
  };
}

/**
 * Whether an error says that `port` was taken when something was told to
 * bind it ("listen tcp 127.0.0.1:24358: bind: address already in use", as Go
 * and most runtimes put it): another process bound it between the pick and
 * the bind, and another port will do.
 */
export function portTakenIn(error: unknown, port: number): boolean {
  const text = error instanceof Error ? error.message : String(error);
  return /address already in use|EADDRINUSE/i.test(text) && new RegExp(`:${port}(?!\\d)`).test(text);
}

/** True when something accepts TCP connections on host:port. */
export function isListening(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  // Connecting, not binding: a bind probe would hold the port for an instant
  // and could make the component that is about to bind it fail.
  return new Promise((resolve) => {
    const socket = createConnection({ host, port, timeout: timeoutMs });
    const done = (listening: boolean) => {
      socket.destroy();
      resolve(listening);
    };
    socket.once("connect", () => done(true));
    socket.once("timeout", () => done(false));
    socket.once("error", () => done(false));
  });
}

/**
 * Waits until something listens on each of `ports` (a name for messages →
 * port) on `host`. Deadline-bounded; the timeout names the ports still closed.
 */
export async function waitForListening(
  ports: Readonly<Record<string, number>>,
  options: { readonly host?: string; readonly timeoutMs: number; readonly signal?: AbortSignal },
): Promise<void> {
  const host = options.host ?? "127.0.0.1";
  await pollUntil(
    async () => {
      const entries = Object.entries(ports);
      const listening = await Promise.all(entries.map(([, port]) => isListening(host, port)));
      const closed = entries.filter((_, index) => !listening[index]);
      return closed.length === 0
        ? { done: true, value: undefined }
        : {
            done: false,
            reason: `not listening yet: ${closed.map(([name, port]) => `${name} on ${host}:${port}`).join(", ")}`,
          };
    },
    {
      description: "the components to listen on their ports",
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    },
  );
}

/**
 * Who holds a lock; written as JSON into the lock directory. The holder is a
 * ProcessOwner, with its start time, so a pid reused after a crash or a
 * container restart is not mistaken for the holder.
 */
export interface LockOwner extends ProcessOwner {
  /** Unique per acquisition, so a release or a stale-lock removal only ever touches the lock it looked at. */
  readonly token: string;
  readonly acquiredAt: string;
  /** What the lock is held for, for the message of whoever waits. */
  readonly purpose: string;
}

export interface LockOptions {
  /** Give up waiting after this many milliseconds. */
  readonly timeoutMs: number;
  /** What the lock is taken for; shown to whoever waits for it. */
  readonly purpose: string;
  readonly signal?: AbortSignal;
  /** Pause between attempts while another process holds the lock; default 100 ms. */
  readonly intervalMs?: number;
  /** Called once, when the lock is found held by somebody else, with who holds it. */
  readonly onWait?: (holder: string) => void;
}

/** A lock this process holds. */
export interface HeldLock {
  readonly path: string;
  /** Removes the lock if it is still ours; safe to call twice. */
  release(): Promise<void>;
}

const OWNER_FILE = "owner.json";

/**
 * The kit never puts a lock in place without its owner file, so a lock
 * directory whose owner cannot be read was made some other way (by hand, by
 * another program). Once this old, it is nobody's work in progress and is
 * removed.
 */
const UNOWNED_STALE_MS = 30_000;

/**
 * Takes a machine-wide lock: the directory `path`, holding the owner's pid.
 * Node has no flock, so the directory is the lock: it is prepared under a
 * unique name with the owner file inside and renamed into place, which is
 * atomic and fails when the lock exists, so the lock never exists without
 * an owner. A lock whose owner process is gone (killed mid-create) is
 * removed. Waits, polling, until `timeoutMs`; the timeout error names the
 * lock and who holds it.
 */
export async function acquireLock(path: string, options: LockOptions): Promise<HeldLock> {
  const owner: LockOwner = {
    ...currentOwner(),
    token: randomBytes(8).toString("hex"),
    acquiredAt: new Date().toISOString(),
    purpose: options.purpose,
  };
  const staging = `${path}.${process.pid}.${owner.token}`;
  try {
    await mkdir(dirname(path), { recursive: true });
    await mkdir(staging);
    await writeFile(join(staging, OWNER_FILE), JSON.stringify(owner));
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw new InfrastructureError(
      "cluster/lock-failed",
      `cannot prepare the lock ${path}: ${describeError(error)}`,
    );
  }
  // Kept here rather than taken from the timeout: an attempt cut short by the
  // deadline would replace the holder with "did not answer".
  let lastReason: string | undefined;
  let told = false;
  try {
    await pollUntil(
      async (): Promise<PollResult<undefined>> => {
        const reason = await tryAcquire(path, staging);
        if (reason === undefined) return { done: true, value: undefined };
        if (!told && reason.startsWith("held by")) {
          told = true;
          options.onWait?.(reason);
        }
        lastReason = reason;
        return { done: false, reason };
      },
      {
        description: `the lock ${path}`,
        timeoutMs: options.timeoutMs,
        intervalMs: options.intervalMs,
        signal: options.signal,
      },
    );
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    if (error instanceof PollTimeoutError) {
      throw new InfrastructureError(
        "cluster/lock-timeout",
        `timed out after ${formatDuration(options.timeoutMs)} waiting for the lock ${path}: ${lastReason ?? error.lastReason}. If that process is stuck, end it; the next run then removes its lock.`,
      );
    }
    throw error;
  }
  let released = false;
  return {
    path,
    async release() {
      if (released) return;
      released = true;
      const current = await readOwner(path);
      // Not ours any more (removed by hand): leave whatever is there alone.
      if (current?.token !== owner.token) return;
      // Renamed away first so the lock vanishes in one step, never seen half-removed.
      const removed = `${path}.released.${owner.token}`;
      try {
        await rename(path, removed);
      } catch (error) {
        if (isErrno(error, "ENOENT")) return;
        throw new InfrastructureError(
          "cluster/lock-failed",
          `cannot release the lock ${path}: ${describeError(error)}`,
        );
      }
      await rm(removed, { recursive: true, force: true });
    },
  };
}

/** Runs `body` holding the lock at `path`; releases it however `body` ends. */
export async function withLock<T>(path: string, options: LockOptions, body: () => Promise<T>): Promise<T> {
  const lock = await acquireLock(path, options);
  try {
    return await body();
  } finally {
    await lock.release();
  }
}

/** One attempt: undefined when the lock is now ours, otherwise why not. */
async function tryAcquire(path: string, staging: string): Promise<string | undefined> {
  try {
    await rename(staging, path);
    return undefined;
  } catch (error) {
    if (!isErrno(error, "EEXIST", "ENOTEMPTY")) {
      throw new InfrastructureError(
        "cluster/lock-failed",
        `cannot take the lock ${path}: ${describeError(error)}`,
      );
    }
  }
  const owner = await readOwner(path);
  if (owner) {
    if (!isStale(owner)) return `held by ${describeOwner(owner)}`;
    await removeStale(path, owner.token);
    return `removed a stale lock of ${describeOwner(owner)}, which is no longer running`;
  }
  const age = await stat(path).then(
    (info) => Date.now() - info.mtimeMs,
    () => undefined,
  );
  if (age === undefined) return "the lock was just released";
  if (age < UNOWNED_STALE_MS) return "the lock has no readable owner";
  await removeStale(path, undefined);
  return `removed a lock without an owner, ${Math.round(age / 1000)}s old`;
}

/**
 * Removes the stale lock whose owner had `token`. Between looking at the
 * owner and removing, another process may already have removed it and taken
 * the lock afresh; so the lock is renamed aside first, the owner checked
 * again there, and a live lock taken by mistake put back.
 */
async function removeStale(path: string, token: string | undefined): Promise<void> {
  const aside = `${path}.stale.${process.pid}.${randomBytes(4).toString("hex")}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return; // someone else removed it
    throw new InfrastructureError(
      "cluster/lock-failed",
      `cannot remove the stale lock ${path}: ${describeError(error)}`,
    );
  }
  if ((await readOwner(aside))?.token === token) {
    await rm(aside, { recursive: true, force: true });
    return;
  }
  try {
    await rename(aside, path);
  } catch (error) {
    throw new InfrastructureError(
      "cluster/lock-failed",
      `removing a stale lock raced with another process; the live lock it moved is at ${aside}: ${describeError(error)}`,
    );
  }
}

/** The lock's owner, or undefined when there is no lock or no readable owner in it. */
export async function readOwner(path: string): Promise<LockOwner | undefined> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(join(path, OWNER_FILE), "utf8"));
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const fields: Record<string, unknown> = Object.fromEntries(Object.entries(value));
  const { pid, hostname: host, token, startTime, acquiredAt, purpose } = fields;
  if (typeof pid !== "number" || typeof host !== "string" || typeof token !== "string") return undefined;
  return {
    pid,
    hostname: host,
    token,
    ...(typeof startTime === "string" ? { startTime } : {}),
    acquiredAt: typeof acquiredAt === "string" ? acquiredAt : "an unknown time",
    purpose: typeof purpose === "string" ? purpose : "unknown purpose",
  };
}

/**
 * A lock is stale when its owner process is gone, or the pid now belongs to
 * a process that started at another time. A lock taken on another host (a
 * cache directory on a shared file system) is never judged: its pid means
 * nothing here.
 */
export function isStale(owner: LockOwner): boolean {
  return ownerState(owner) === "gone";
}

function describeOwner(owner: LockOwner): string {
  return `pid ${owner.pid} on ${owner.hostname} (${owner.purpose}) since ${owner.acquiredAt}`;
}

function formatDuration(ms: number): string {
  return ms < 10_000 ? `${ms} ms` : `${Math.round(ms / 1000)}s`;
}

function isErrno(error: unknown, ...codes: string[]): boolean {
  return (
    error instanceof Error && "code" in error && typeof error.code === "string" && codes.includes(error.code)
  );
}
