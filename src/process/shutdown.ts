import { killTrackedProcessGroups } from "./child-registry.js";

/**
 * Turns SIGINT/SIGTERM into an AbortSignal so every long step can stop and
 * clean up in its own `finally`. A second signal gives up on cleanup and
 * lets the default action (termination) happen.
 */
export function abortOnSignals(
  onFirst: (signal: NodeJS.Signals) => void = () => {},
  signals: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM"],
): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const handler = (received: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      // Dying by the signal's default action skips "exit" handlers: take the operators along first.
      killTrackedProcessGroups();
      dispose();
      process.kill(process.pid, received);
      return;
    }
    onFirst(received);
    controller.abort(new Error(`received ${received}`));
  };
  const dispose = () => {
    for (const s of signals) process.off(s, handler);
  };
  for (const s of signals) process.on(s, handler);
  return { signal: controller.signal, dispose };
}
