import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import {
  processTable,
  signalProcess,
  waitForExit,
  type ProcessTable,
  type ProcessTableSource,
} from "../../src/process/process-table.js";

// Both sources of the process table against real processes on this machine: /proc, which
// Linux uses, and ps, which macOS uses (run here with procps's ps). The same questions must
// get the same answers from both; process-table-ps-output.test.ts covers what only macOS's
// ps prints (its -E environment listing, its column widths).

const groups: number[] = [];
afterEach(() => {
  for (const group of groups.splice(0)) signalProcess(-group, "SIGKILL");
});

const MARK = "RC_PROCESS_TABLE_TEST";

/** Polls `check` every 20 ms until it holds, up to 5 s. */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !check(); waited += 20) {
    if (waited > 5000) throw new Error(`timed out waiting for ${what}`);
    await delay(20);
  }
}

/**
 * A process group of its own, as OperatorProcess starts operators: sh (the leader, with `tag`
 * as its $0, so in its command line only) and its child sleep, both carrying `MARK=<value>`
 * (with spaces, as a path under "Application Support" has). Once both exist.
 */
async function startGroup(table: ProcessTable) {
  const tag = `rc-tag-${randomBytes(6).toString("hex")}`;
  const entry = `${MARK}=/tmp/rc process table/${tag}.json`;
  const child = spawn("sh", ["-c", "sleep 600 & wait", tag], {
    detached: true,
    stdio: "ignore",
    env: { ...process.env, [MARK]: entry.slice(MARK.length + 1) },
  });
  const pgid = child.pid;
  if (pgid === undefined) throw new Error("could not start sh");
  groups.push(pgid);
  // Two members once sh has forked; the child carries sh's command line (and the tag) until it
  // has exec'd sleep, which on a loaded machine takes a while: wait for the exec too.
  const forkedSleep = () => table.groupMembers(pgid).find((pid) => pid !== pgid);
  await until(() => {
    const sleep = forkedSleep();
    return sleep !== undefined && /^sleep 600/.test(table.commandLine(sleep)?.trim() ?? "");
  }, "sh and its sleep");
  const sleep = forkedSleep() ?? 0;
  return { child, pgid, sleep, tag, entry };
}

/** The pid of a process that has exited and been reaped. */
function deadPid(): number {
  const pid = spawnSync(process.execPath, ["-e", ""]).pid;
  if (pid === undefined) throw new Error("could not start a child");
  return pid;
}

/** Resolves once `child` has exited and Node has reaped it. */
function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()));
}

const sources: ProcessTableSource[] = ["proc", "ps"];

describe.each(sources)("the process table from %s", (source) => {
  const table = processTable(source);

  it("finds a group's members, and a process by an argument of its command line", async () => {
    const { pgid, sleep, tag } = await startGroup(table);
    expect(table.groupMembers(pgid).sort((a, b) => a - b)).toEqual([pgid, sleep].sort((a, b) => a - b));
    expect(sleep).toBeGreaterThan(0);
    expect(table.findByArgument(tag)).toEqual([pgid]);
    expect(table.commandLine(pgid)).toContain(`sh -c sleep 600 & wait ${tag}`);
    expect(table.commandLine(sleep)).toContain("sleep 600");
    expect(table.commandLine(deadPid())).toBeUndefined();
  });

  it("finds every process that carries an environment entry, whole (a value with spaces), and no other", async () => {
    const { pgid, sleep, entry } = await startGroup(table);
    expect(table.findByEnvironment(entry).sort((a, b) => a - b)).toEqual([pgid, sleep].sort((a, b) => a - b));
    expect(table.findByEnvironment(entry.slice(0, -1))).toEqual([]);
    expect(table.findByEnvironment(`${entry}x`)).toEqual([]);
  });

  it("never lists this process", () => {
    const own = table.commandLine(process.pid)?.trim();
    expect(own).toBeTruthy();
    expect(table.findByArgument(own ?? "")).not.toContain(process.pid);
  });

  it("reads a start time that stays the same, and differs for a process started a second later", async () => {
    const before = Date.now();
    const first = await startGroup(table);
    const start = table.startTime(first.pgid);
    expect(start).toBeDefined();
    expect(table.startTime(first.pgid)).toBe(start);
    await delay(1100);
    const second = await startGroup(table);
    expect(table.startTime(second.pgid)).toBeDefined();
    expect(table.startTime(second.pgid)).not.toBe(start);
    expect(table.startTime(first.pgid)).toBe(start);
    expect(table.startTime(deadPid())).toBeUndefined();
    if (source === "ps") {
      // The second it started, in UTC, whatever this process's time zone.
      expect(start).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      expect(Math.abs(Date.parse(start ?? "") - before)).toBeLessThan(5000);
    } else {
      expect(start).toMatch(/^\d+$/);
    }
  });

  it("counts a zombie as gone, though the pid can still be signalled", async () => {
    // sh execs a sleep that never waits for sh's first child: once that child exits it stays a zombie.
    const parent = spawn("sh", ["-c", "sleep 0.3 & echo $!; exec sleep 600"], {
      detached: true,
      stdio: ["ignore", "pipe", "ignore"],
    });
    const pgid = parent.pid;
    if (pgid === undefined) throw new Error("could not start sh");
    groups.push(pgid);
    const zombie = await new Promise<number>((resolve) =>
      parent.stdout.once("data", (chunk: Buffer) => resolve(Number.parseInt(chunk.toString(), 10))),
    );
    await until(() => table.state(zombie) === "Z", `${zombie} to be a zombie`);
    expect(() => process.kill(zombie, 0)).not.toThrow();
    expect(table.isAlive(zombie)).toBe(false);
    expect(table.isAlive(pgid)).toBe(true);
    expect(table.groupMembers(pgid)).toEqual([pgid]);
  });

  it("sees a group gone once it is signalled", async () => {
    const { child, pgid, sleep } = await startGroup(table);
    signalProcess(-pgid, "SIGKILL");
    expect(
      await waitForExit(() => table.groupMembers(pgid), { description: "the group", timeoutMs: 5000 }),
    ).toEqual([]);
    await exited(child);
    expect(table.isAlive(pgid)).toBe(false);
    expect(table.isAlive(sleep)).toBe(false);
    expect(table.state(pgid)).toBeUndefined();
  });
});
