import { readdirSync, readFileSync } from "node:fs";
import { pollUntil } from "../util/poll.js";

/** Facts about OS processes by pid; used to prove nothing the kit started survives it. */

/**
 * True when a process with this pid exists and has not exited. A zombie
 * (exited, not yet reaped) counts as gone: daemons that kwokctl detaches are
 * reparented to PID 1, which in some containers never reaps them.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM means it exists but belongs to someone else.
    if (!(error instanceof Error && "code" in error && error.code === "EPERM")) return false;
  }
  return processState(pid) !== "Z";
}

/** The one-letter state from /proc (R, S, D, Z, ...), or undefined off Linux or when gone. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is parenthesised and may contain spaces; the state follows it.
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return undefined;
  }
}

/**
 * When the process started: field 22 of /proc/<pid>/stat, in clock ticks
 * since boot (Linux only; undefined elsewhere or when it is gone). With the
 * pid it names one process for good: a pid reused after the process ended
 * has another start time.
 */
export function processStartTime(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is parenthesised and may contain spaces; field 3 follows it.
    return text.slice(text.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** Sends a signal, ignoring a process that is already gone. */
export function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (error) {
    if (!(error instanceof Error && "code" in error && error.code === "ESRCH")) throw error;
  }
}

/**
 * A process's command line, its arguments joined by spaces (Linux only;
 * undefined elsewhere, when it is gone, or when it is not ours to read).
 */
export function processCommandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return undefined;
  }
}

/**
 * Pids of live processes whose command line contains `fragment`, found by
 * reading /proc (Linux only; empty elsewhere). Finds processes a tool started
 * but had no time to record, e.g. when it was killed mid-start.
 */
export function findProcessesByArgument(fragment: string): number[] {
  return findProcesses("cmdline", (words) => words.join(" ").includes(fragment));
}

/**
 * Pids of live processes whose environment holds exactly `entry`
 * ("NAME=value"), found by reading /proc (Linux only; empty elsewhere).
 * Environment variables are inherited, so this finds every descendant of a
 * process the kit marked, even one that left its process group.
 */
export function findProcessesByEnvironment(entry: string): number[] {
  return findProcesses("environ", (entries) => entries.includes(entry));
}

/** Live processes (other than this one) whose /proc/<pid>/<file>, split at NULs, satisfies `test`. */
function findProcesses(file: "cmdline" | "environ", test: (parts: string[]) => boolean): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const name of entries) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (test(readFileSync(`/proc/${pid}/${file}`, "utf8").split("\0")) && isProcessAlive(pid))
        found.push(pid);
    } catch {
      // Gone while we looked, or another user's process (its environment is not ours to read).
    }
  }
  return found;
}

/** Live (non-zombie) members of a process group, read from /proc (Linux). */
export function processGroupMembers(pgid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return isProcessAlive(pgid) ? [pgid] : [];
  }
  const members: number[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // After the command: state, ppid, pgrp.
      if (Number(fields[2]) === pgid && fields[0] !== "Z") members.push(pid);
    } catch {
      // Gone while we looked.
    }
  }
  return members;
}

/**
 * Waits until `alive()` lists no process, polling to a deadline; resolves with
 * whatever still lives then (empty when all are gone).
 */
export async function waitForExit(
  alive: () => number[],
  options: { description: string; timeoutMs: number },
): Promise<number[]> {
  return pollUntil(
    () => {
      const living = alive();
      return living.length === 0
        ? { done: true, value: [] }
        : { done: false, reason: `alive: ${living.join(", ")}` };
    },
    { ...options, intervalMs: 20 },
  ).catch(() => alive());
}
