import { describe, expect, it } from "vitest";
import {
  GIVE_UP_IDLE_MS,
  hasGivenUp,
  isQuiet,
  updateDelivered,
  updateRead,
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

describe("updateDelivered", () => {
  const widget = { group: "example.com", resource: "widgets", namespace: "ns", name: "w" };
  const event = (resourceVersion: string, fields: Partial<typeof widget> = {}) => ({
    ...widget,
    ...fields,
    resourceVersion,
  });

  it.each<[string, Parameters<typeof updateDelivered>[0], string, boolean]>([
    ["the update's own event", [event("41"), event("57")], "57", true],
    ["a later one (a coalesced watch skips the update's own)", [event("41"), event("60")], "57", true],
    ["only events from before the update", [event("41"), event("56")], "57", false],
    ["an event of another object at a later revision", [event("60", { name: "other" })], "57", false],
    ["the same revision in another namespace", [event("57", { namespace: "elsewhere" })], "57", false],
    ["opaque resource versions compare only as equal", [event("b")], "a", false],
    ["nothing delivered", [], "57", false],
  ])("%s", (_name, deliveries, resourceVersion, delivered) => {
    expect(updateDelivered(deliveries, widget, resourceVersion)).toBe(delivered);
  });
});

describe("updateRead", () => {
  const widget = { group: "example.com", resource: "widgets", namespace: "ns", name: "w" };
  const read = (fields: Partial<Parameters<typeof updateRead>[0][number]> = {}) => ({
    verb: "list" as const,
    group: "example.com",
    resource: "widgets",
    code: 200,
    ...fields,
  });

  it.each<[string, Parameters<typeof updateRead>[0], boolean]>([
    ["a consistent relist, cluster-wide", [read()], true],
    ["a consistent list of its namespace", [read({ namespace: "ns" })], true],
    ["a get of it", [read({ verb: "get", namespace: "ns", name: "w" })], true],
    [
      "a get of it from any cached state",
      [read({ verb: "get", namespace: "ns", name: "w", resourceVersion: "0" })],
      false,
    ],
    ["a list from the update's revision or later", [read({ resourceVersion: "57" })], true],
    ["a list from any cached state", [read({ resourceVersion: "0" })], false],
    ["a list from an older revision", [read({ resourceVersion: "41" })], false],
    ["a filtered list", [read({ labelSelector: "team=a" })], false],
    ["a list of another namespace", [read({ namespace: "elsewhere" })], false],
    ["a get of another object", [read({ verb: "get", namespace: "ns", name: "other" })], false],
    ["a refused list", [read({ code: 403 })], false],
    ["a watch (its events count, not its start)", [read({ verb: "watch" })], false],
    ["another resource", [read({ resource: "gadgets" })], false],
  ])("%s", (_name, reads, seen) => {
    expect(updateRead(reads, widget, "57")).toBe(seen);
  });
});
