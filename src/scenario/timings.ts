import type { Clock } from "../util/clock.js";

// Where a run's time goes, phase by phase (bench/run.bench.ts prints it): scenarios add to it as they go.

/** The Timings entry that sums whole scenarios (namespace to cleanup), not one of their phases. */
export const SCENARIO_LIFETIME = "scenario lifetime";

/** Time spent per phase of the scenarios (ms), summed over a run. */
export class Timings {
  readonly totals = new Map<string, number>();
  readonly counts = new Map<string, number>();

  add(phase: string, ms: number): void {
    this.totals.set(phase, (this.totals.get(phase) ?? 0) + ms);
    this.counts.set(phase, (this.counts.get(phase) ?? 0) + 1);
  }

  async measure<T>(phase: string, clock: Clock, body: () => Promise<T>): Promise<T> {
    const started = clock.now();
    try {
      return await body();
    } finally {
      this.add(phase, clock.now() - started);
    }
  }
}
