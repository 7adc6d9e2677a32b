/**
 * Where the kit reads the time. Injected (STYLE convention 3) so that logs,
 * quiet periods and timestamps can be driven by a test without sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** An ISO-8601 timestamp of `clock`'s now. */
export function isoNow(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}
