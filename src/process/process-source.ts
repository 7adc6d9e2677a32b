/**
 * Where the kit reads facts about OS processes: /proc on Linux
 * (proc-table.ts), the `ps` command elsewhere, i.e. macOS (ps-table.ts).
 * process-table.ts picks one and answers the rest of the kit from it.
 */
export type ProcessTableSource = "proc" | "ps";

/** What the kit asks about processes, answered from one source. */
export interface ProcessTable {
  readonly source: ProcessTableSource;
  /**
   * True when a process with this pid exists and has not exited. A zombie
   * (exited, not yet reaped) counts as gone.
   */
  isAlive(pid: number): boolean;
  /**
   * The process's state letter (R, S, D, T, Z, ...), or undefined when it
   * is gone or cannot be read.
   */
  state(pid: number): string | undefined;
  /**
   * When the process started, as a string that, with the pid, names one
   * process for good. /proc: clock ticks since boot ("123456"); ps: the
   * second it started, in UTC ("2026-11-30T14:37:22Z").
   */
  startTime(pid: number): string | undefined;
  /** Its arguments joined by spaces; undefined when gone or not ours to read. */
  commandLine(pid: number): string | undefined;
  /** Live processes, other than this one, whose command line contains `fragment`. */
  findByArgument(fragment: string): number[];
  /** Live processes, other than this one, whose environment holds exactly `entry` ("NAME=value"). */
  findByEnvironment(entry: string): number[];
  /** Live (non-zombie) members of a process group. */
  groupMembers(pgid: number): number[];
}

/** True when some process (a zombie too) has this pid: signal 0 reaches it, or EPERM says it is someone else's. */
export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && "code" in error && error.code === "EPERM";
  }
}
