import { rmSync } from "node:fs";

/**
 * Process groups the kit started and has not yet stopped. Whatever ends the
 * kit (an uncaught error, a stray process.exit in a dependency) must not
 * leave an operator running: on exit, every group still tracked is killed.
 * Ordinary shutdown stops them properly first and untracks them.
 *
 * Each group may come with the path of its ownership record
 * (src/cleanup/ownership.ts); a group killed here has its record removed
 * with it, since nothing is left for `clean` to find.
 */
const groups = new Map<number, string | undefined>();
let installed = false;

export function trackProcessGroup(pgid: number, recordPath?: string): void {
  groups.set(pgid, recordPath);
  if (!installed) {
    installed = true;
    process.on("exit", killTrackedProcessGroups);
  }
}

export function untrackProcessGroup(pgid: number): void {
  groups.delete(pgid);
}

/** SIGKILL to every tracked group, synchronously (usable in an "exit" handler). */
export function killTrackedProcessGroups(): void {
  for (const [group, recordPath] of groups) {
    try {
      process.kill(-group, "SIGKILL");
    } catch (error) {
      // ESRCH: already gone. Anything else: it may still run, so its record stays for `clean`.
      if (!(error instanceof Error && "code" in error && error.code === "ESRCH")) continue;
    }
    if (recordPath !== undefined) {
      try {
        rmSync(recordPath, { force: true });
      } catch {
        // The process is exiting; a record left behind names a dead owner and only costs `clean` a look.
      }
    }
  }
  groups.clear();
}
