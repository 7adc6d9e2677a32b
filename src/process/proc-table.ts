import { readdirSync, readFileSync } from "node:fs";
import { pidExists, type ProcessTable } from "./process-source.js";

/**
 * The process table read from /proc (Linux): the kit's first source of
 * facts about processes, used wherever /proc exists. Off Linux every
 * question here finds nothing (process-table.ts then uses ps-table.ts).
 */
export const procTable: ProcessTable = {
  source: "proc",
  isAlive,
  state: processState,
  startTime: processStartTime,
  commandLine: processCommandLine,
  findByArgument: (fragment) => findProcesses("cmdline", (words) => words.join(" ").includes(fragment)),
  findByEnvironment: (entry) => findProcesses("environ", (entries) => entries.includes(entry)),
  groupMembers: processGroupMembers,
};

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
function processStartTime(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is parenthesised and may contain spaces; field 3 follows it.
    return text.slice(text.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** /proc/<pid>/cmdline with its NULs as spaces; undefined when gone or not ours to read. */
function processCommandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return undefined;
  }
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
      if (test(readFileSync(`/proc/${pid}/${file}`, "utf8").split("\0")) && isAlive(pid)) found.push(pid);
    } catch {
      // Gone while we looked, or another user's process (its environment is not ours to read).
    }
  }
  return found;
}

/** Live (non-zombie) members of a process group, read from /proc. */
function processGroupMembers(pgid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return isAlive(pgid) ? [pgid] : [];
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

/** A process with this pid exists and is not a zombie. */
function isAlive(pid: number): boolean {
  return pidExists(pid) && processState(pid) !== "Z";
}
