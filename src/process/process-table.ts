import { existsSync } from "node:fs";
import { UsageError } from "../errors.js";
import { pollUntil } from "../util/poll.js";
import type { ProcessTable, ProcessTableSource } from "./process-source.js";
import { procTable } from "./proc-table.js";
import { psTable } from "./ps-table.js";

export type { ProcessTable, ProcessTableSource } from "./process-source.js";

/**
 * Facts about OS processes by pid; used to prove nothing the kit started
 * survives it. They come from /proc where it exists (Linux), and from the
 * `ps` command elsewhere (macOS): see chooseProcessTableSource.
 */

/**
 * Forces a source: `proc` or `ps`. Read once, at the first question. For
 * tests: `ps` runs the macOS code path on Linux.
 */
export const PROCESS_TABLE_ENV = "RECONCILE_CONFORMANCE_PROCESS_TABLE";

/** The source `setting` (the value of PROCESS_TABLE_ENV) names, or by default /proc where it exists, else ps. */
export function chooseProcessTableSource(
  setting: string | undefined,
  procExists: boolean,
): ProcessTableSource {
  if (setting === undefined || setting === "") return procExists ? "proc" : "ps";
  if (setting === "proc" || setting === "ps") return setting;
  throw new UsageError(
    "cli/invalid-process-table",
    `${PROCESS_TABLE_ENV}=${setting}: expected "proc" or "ps"`,
  );
}

/** The process table of one source. */
export function processTable(source: ProcessTableSource): ProcessTable {
  return source === "proc" ? procTable : psTable();
}

let chosen: ProcessTable | undefined;

/** The table every function below answers from, chosen at the first question. */
function systemTable(): ProcessTable {
  chosen ??= processTable(
    chooseProcessTableSource(process.env[PROCESS_TABLE_ENV], existsSync("/proc/self/stat")),
  );
  return chosen;
}

/** Where this process reads facts about processes: /proc or ps. */
export function processTableSource(): ProcessTableSource {
  return systemTable().source;
}

/**
 * True when a process with this pid exists and has not exited. A zombie
 * (exited, not yet reaped) counts as gone: daemons that kwokctl detaches are
 * reparented to PID 1, which in some containers never reaps them.
 */
export function isProcessAlive(pid: number): boolean {
  return systemTable().isAlive(pid);
}

/**
 * When the process started (undefined when it is gone). With the pid it
 * names one process for good: a pid reused after the process ended has
 * another start time. /proc: clock ticks since boot; ps: the second, in UTC.
 */
export function processStartTime(pid: number): string | undefined {
  return systemTable().startTime(pid);
}

/**
 * Whether two start times can be compared: both read from /proc (digits,
 * clock ticks) or both from ps (an ISO date). Two from different sources
 * (a record written with one, read with the other) tell nothing.
 */
export function comparableStartTimes(a: string, b: string): boolean {
  return /^\d+$/.test(a) === /^\d+$/.test(b);
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
 * A process's command line, its arguments joined by spaces (undefined when
 * it is gone, or, from /proc, when it is not ours to read).
 */
export function processCommandLine(pid: number): string | undefined {
  return systemTable().commandLine(pid);
}

/**
 * Pids of live processes whose command line contains `fragment`. Finds
 * processes a tool started but had no time to record, e.g. when it was
 * killed mid-start.
 */
export function findProcessesByArgument(fragment: string): number[] {
  return systemTable().findByArgument(fragment);
}

/**
 * Pids of live processes whose environment holds exactly `entry`
 * ("NAME=value"). Environment variables are inherited, so this finds every
 * descendant of a process the kit marked, even one that left its process
 * group. Only processes whose environment is ours to read: on macOS, ps
 * shows the environment of the user's own processes only.
 */
export function findProcessesByEnvironment(entry: string): number[] {
  return systemTable().findByEnvironment(entry);
}

/** Live (non-zombie) members of a process group. */
export function processGroupMembers(pgid: number): number[] {
  return systemTable().groupMembers(pgid);
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
