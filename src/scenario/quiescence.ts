/**
 * The one rule by which every wait of a scenario (convergence, a fault
 * taking effect, a drift repair, a pre-existing child, a spec update
 * followed) decides that the operator is done: it has been silent (no write
 * completed, none in flight) for the quiet period, counted from the last
 * stimulus, so that a restarted operator or a touched object always gets the
 * whole period to react before the kit calls it quiet. Pure.
 */

/** How long an operator has been silent, and how long since the kit last gave it a reason to act. */
export interface Silence {
  /** Since its last write completed; 0 while one is in flight. */
  readonly operatorIdleMs: number;
  /** Since the wait's stimulus (a create, an update, a touch, a perturbation, a restart). */
  readonly sinceStimulusMs: number;
}

/**
 * How long an operator that has not reacted to a change may stay silent
 * before the kit concludes it is not going to: an operator that watches the
 * object reacts at once (one that repairs only on a periodic resync is
 * judged by what it did within this time).
 */
export const GIVE_UP_IDLE_MS = 10_000;

/** How long the operator has been silent since the stimulus. */
export function silentFor(silence: Silence): number {
  return Math.max(0, Math.min(silence.operatorIdleMs, silence.sinceStimulusMs));
}

/** Whether the operator has been silent for the quiet period since the stimulus. */
export function isQuiet(silence: Silence, quietPeriodMs: number): boolean {
  return silentFor(silence) >= quietPeriodMs;
}

/** Whether an operator that has not done what the wait waits for has been silent so long it never will. */
export function hasGivenUp(silence: Silence, giveUpMs: number = GIVE_UP_IDLE_MS): boolean {
  return silentFor(silence) >= giveUpMs;
}
