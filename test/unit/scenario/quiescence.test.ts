import { describe, expect, it } from "vitest";
import {
  GIVE_UP_IDLE_MS,
  hasGivenUp,
  isQuiet,
  silentFor,
  type Silence,
} from "../../../src/scenario/quiescence.js";

// The one quiescence rule every wait uses: silence is counted from the later of the operator's last
// write and the stimulus, so a wait never ends on silence that began before it gave a reason to act.
describe("quiescence", () => {
  it.each<[string, Silence, number, boolean]>([
    [
      "silent since long before the stimulus: counted from the stimulus",
      { operatorIdleMs: 60_000, sinceStimulusMs: 200 },
      200,
      false,
    ],
    [
      "wrote after the stimulus: counted from the write",
      { operatorIdleMs: 300, sinceStimulusMs: 5_000 },
      300,
      false,
    ],
    ["a write in flight: not silent at all", { operatorIdleMs: 0, sinceStimulusMs: 5_000 }, 0, false],
    [
      "silent for the whole period after both",
      { operatorIdleMs: 1_600, sinceStimulusMs: 2_000 },
      1_600,
      true,
    ],
    ["exactly the period", { operatorIdleMs: 1_500, sinceStimulusMs: 1_500 }, 1_500, true],
    [
      "a clock reading before the stimulus counts as no silence",
      { operatorIdleMs: 9_000, sinceStimulusMs: -5 },
      0,
      false,
    ],
  ])("%s", (_name, silence, silent, quiet) => {
    expect(silentFor(silence)).toBe(silent);
    expect(isQuiet(silence, 1_500)).toBe(quiet);
  });

  it.each<[Silence, boolean]>([
    [{ operatorIdleMs: GIVE_UP_IDLE_MS, sinceStimulusMs: GIVE_UP_IDLE_MS }, true],
    [{ operatorIdleMs: 60_000, sinceStimulusMs: GIVE_UP_IDLE_MS - 1 }, false],
    [{ operatorIdleMs: GIVE_UP_IDLE_MS - 1, sinceStimulusMs: 60_000 }, false],
  ])("gives up after %o: %s", (silence, given) => {
    expect(hasGivenUp(silence)).toBe(given);
  });
});
