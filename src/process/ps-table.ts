import { spawnSync } from "node:child_process";
import { pidExists, type ProcessTable } from "./process-source.js";

/**
 * The process table read from the `ps` command: the kit's source of facts
 * about processes where there is no /proc (macOS). Both ps implementations
 * the kit meets list every process (`-A`) with the columns it needs (`-o`,
 * each with an empty header, so no header line) at unlimited width (`-ww`):
 *
 *   macOS (BSD ps, adv_cmds):  ps -ww -o pid=,ppid=,pgid=,stat=,lstart=,command= -A
 *   Linux (procps-ng):         the same
 *
 * They differ in how they show the environment: macOS appends it to the
 * command with `-E`, and only for the processes of the user running ps
 * (or every process for root), which are the only ones the kit looks for;
 * procps appends it with the BSD-style `e` (macOS's `-e` is "every
 * process", as POSIX has it). Zombies: state Z on both; macOS
 * shows their command as "<defunct>", procps as "[name] <defunct>".
 *
 * ps runs synchronously (the questions are synchronous) with an
 * environment of its own: the C locale for times (English day and month
 * names in lstart), a UTF-8 one for characters (so a non-ASCII path in a
 * command line is shown as it is, not escaped), UTC for lstart (so a start
 * time reads the same whatever the caller's TZ), and nothing of the kit's
 * own environment (so ps's own line carries no mark the kit looks for).
 */

/** Which ps: macOS's (BSD) or procps-ng's (Linux). */
export type PsDialect = "macos" | "procps";

export function psDialect(platform: NodeJS.Platform = process.platform): PsDialect {
  return platform === "darwin" ? "macos" : "procps";
}

/** One line of ps. */
export interface PsProcess {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  /** ps's stat column: the state letter (R, S, T, Z, ...) and then flags (s, +, <, ...). */
  readonly stat: string;
  /**
   * When it started, to the second (all ps shows), in UTC:
   * "2026-11-30T14:37:22Z". With the pid that is enough to name one process
   * for good: another process would need the same pid within the same
   * second, i.e. the first one gone and its pid handed out again (pids are
   * handed out in order, wrapping around) in under a second.
   */
  readonly startTime: string;
  /** Its arguments joined by spaces; in an environment listing, its environment entries follow. */
  readonly command: string;
}

const COLUMNS = "pid=,ppid=,pgid=,stat=,lstart=,command=";

/** ps's arguments: every process, or the one with `pid`; with the environment after each command. */
export function psArguments(
  dialect: PsDialect,
  options: { readonly pid?: number; readonly environment?: boolean } = {},
): string[] {
  const args = ["-ww", "-o", COLUMNS];
  if (options.environment) args.push(dialect === "macos" ? "-E" : "e");
  args.push(...(options.pid === undefined ? ["-A"] : ["-p", String(options.pid)]));
  return args;
}

/** The ps to run: macOS's own (a PATH may put another first), procps's from PATH. */
export function psCommand(dialect: PsDialect): string {
  return dialect === "macos" ? "/bin/ps" : "ps";
}

/** ps's environment: see the top of this file. `LC_CTYPE=UTF-8` is macOS's name for UTF-8. */
export function psEnvironment(
  dialect: PsDialect,
  parent: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  return {
    PATH: parent.PATH ?? "/usr/bin:/bin",
    TZ: "UTC0",
    LC_TIME: "C",
    LC_CTYPE: dialect === "macos" ? "UTF-8" : "C.UTF-8",
  };
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

// pid ppid pgid stat, then lstart ("Mon Nov  2 09:05:01 2026": C locale, day padded with a space),
// then the command. procps separates lstart from the command by one space; macOS pads lstart to
// 28 characters first. A command's own leading spaces are therefore lost (none of the kit's has any).
const LINE =
  /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+[A-Z][a-z]{2}\s+([A-Z][a-z]{2})\s+(\d{1,2})\s+(\d{2}:\d{2}:\d{2})\s+(\d{4})(?: +(.*))?$/;

/** The lines of ps output (of psArguments' columns) as processes; a line that is not one is skipped. */
export function parsePsOutput(text: string): PsProcess[] {
  const processes: PsProcess[] = [];
  for (const line of text.split("\n")) {
    const match = LINE.exec(line);
    if (!match) continue;
    const [, pid, ppid, pgid, stat, month, day, time, year, command] = match;
    const startTime = lstartToUtc(month ?? "", day ?? "", time ?? "", year ?? "");
    if (startTime === undefined) continue;
    processes.push({
      pid: Number(pid),
      ppid: Number(ppid),
      pgid: Number(pgid),
      stat: stat ?? "",
      startTime,
      command: command ?? "",
    });
  }
  return processes;
}

/** lstart's parts (printed with TZ=UTC0) as an ISO 8601 UTC second, or undefined when they are not a date. */
function lstartToUtc(month: string, day: string, time: string, year: string): string | undefined {
  const index = MONTHS.indexOf(month);
  if (index < 0) return undefined;
  const iso = `${year}-${String(index + 1).padStart(2, "0")}-${day.padStart(2, "0")}T${time}Z`;
  const parsed = new Date(iso);
  // Date rolls an impossible day over (Feb 31 is Mar 3): only a date that reads back the same is one.
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString() === iso.replace("Z", ".000Z")
    ? iso
    : undefined;
}

/** True when a zombie: exited, not yet reaped, so gone for the kit. */
export function isZombie(entry: Pick<PsProcess, "stat">): boolean {
  return entry.stat.startsWith("Z");
}

/**
 * Whether a line of an environment listing holds exactly `entry`
 * ("NAME=value"): ps joins arguments and environment entries with spaces,
 * so the entry must stand between spaces or at the end, after the command.
 * A value with spaces is found whole; one that merely starts with `entry`'s
 * value ("…/x.json.tmp" for "…/x.json") is not it.
 */
export function hasEnvironmentEntry(line: string, entry: string): boolean {
  for (let at = line.indexOf(entry); at >= 0; at = line.indexOf(entry, at + 1)) {
    const end = at + entry.length;
    if (at > 0 && line[at - 1] === " " && (end === line.length || line[end] === " ")) return true;
  }
  return false;
}

/** What running ps gave: its output, and its own pid (its line is not a process the kit asked about). */
export interface PsRun {
  readonly stdout: string;
  readonly pid?: number;
}

/**
 * Runs ps synchronously. Exit status 1 with no output is ps saying it
 * selected nothing (`-p` of a pid that is gone); any other failure throws,
 * since an empty answer would say that nothing runs.
 */
export function runPs(dialect: PsDialect, args: readonly string[]): PsRun {
  const command = psCommand(dialect);
  const result = spawnSync(command, args, {
    env: psEnvironment(dialect),
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    // An environment listing of every process can be large.
    maxBuffer: 256 * 1024 * 1024,
    timeout: 30_000,
  });
  const described = `${command} ${args.join(" ")}`;
  if (result.error) {
    throw new Error(`cannot list processes: ${described}: ${result.error.message}`, { cause: result.error });
  }
  if (result.status === 0 || (result.status === 1 && result.stdout.trim() === "")) {
    return { stdout: result.stdout, pid: result.pid };
  }
  throw new Error(
    `cannot list processes: ${described} exited with ${result.status ?? result.signal}: ${result.stderr.trim()}`,
  );
}

export interface PsTableOptions {
  readonly dialect?: PsDialect;
  /** Runs ps with these arguments; by default runPs. Tests give recorded output. */
  readonly run?: (args: readonly string[]) => PsRun;
}

/** The process table read from ps. Each question runs ps once. */
export function psTable(options: PsTableOptions = {}): ProcessTable {
  const dialect = options.dialect ?? psDialect();
  const run = options.run ?? ((args: readonly string[]) => runPs(dialect, args));
  const list = (listing: { pid?: number; environment?: boolean }): PsProcess[] => {
    const ran = run(psArguments(dialect, listing));
    return parsePsOutput(ran.stdout).filter((entry) => entry.pid !== ran.pid);
  };
  const one = (pid: number) => list({ pid }).find((entry) => entry.pid === pid);
  /** Every live process but this one, as the finders want. */
  const others = (environment: boolean) =>
    list({ environment }).filter((entry) => entry.pid !== process.pid && !isZombie(entry));
  return {
    source: "ps",
    // Alive only when ps lists it, not as a zombie: running ps takes long enough for a zombie
    // that answered the signal to be reaped before ps looks, and then it is gone, not alive.
    isAlive: (pid) => {
      if (!pidExists(pid)) return false;
      const entry = one(pid);
      return entry !== undefined && !isZombie(entry);
    },
    state: (pid) => one(pid)?.stat.charAt(0),
    startTime: (pid) => one(pid)?.startTime,
    commandLine: (pid) => one(pid)?.command,
    findByArgument: (fragment) =>
      others(false)
        .filter((entry) => entry.command.includes(fragment))
        .map((entry) => entry.pid),
    findByEnvironment: (entry) =>
      others(true)
        .filter((found) => hasEnvironmentEntry(found.command, entry))
        .map((found) => found.pid),
    groupMembers: (pgid) =>
      list({})
        .filter((entry) => entry.pgid === pgid && !isZombie(entry))
        .map((entry) => entry.pid),
  };
}
