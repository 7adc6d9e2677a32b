/**
 * Process groups the kit started and has not yet stopped. Whatever ends the
 * kit (an uncaught error, a stray process.exit in a dependency) must not
 * leave an operator running: on exit, every group still tracked is killed.
 * Ordinary shutdown stops them properly first and untracks them.
 */
const groups = new Set<number>();
let installed = false;

export function trackProcessGroup(pgid: number): void {
  groups.add(pgid);
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
  for (const group of groups) {
    try {
      process.kill(-group, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  groups.clear();
}
