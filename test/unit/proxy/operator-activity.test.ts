import { describe, expect, it } from "vitest";
import {
  countsTowardActivity,
  OperatorActivity,
  type ActivityWrite,
} from "../../../src/proxy/operator-activity.js";

describe("countsTowardActivity", () => {
  it.each<[string, ActivityWrite, string | undefined, boolean]>([
    ["an operator write, no quiet namespace", { actor: "operator", namespace: "other" }, undefined, true],
    ["an operator write in the quiet namespace", { actor: "operator", namespace: "rc-a" }, "rc-a", true],
    // An earlier scenario's namespace, terminating: the operator's work there says nothing here.
    ["an operator write in another namespace", { actor: "operator", namespace: "rc-b" }, "rc-a", false],
    ["a cluster-scoped operator write", { actor: "operator" }, "rc-a", true],
    ["a cluster-scoped operator write, no quiet namespace", { actor: "operator" }, undefined, true],
    // The kit's writes are the stimuli, never the operator's activity.
    ["a kit write", { actor: "kit", namespace: "rc-a" }, "rc-a", false],
    ["a kit write, no quiet namespace", { actor: "kit", namespace: "rc-a" }, undefined, false],
    ["a cluster-scoped kit write", { actor: "kit" }, undefined, false],
  ])("%s -> %s", (_case, write, quietNamespace, expected) => {
    expect(countsTowardActivity(write, quietNamespace)).toBe(expected);
  });
});

/** One step of a script: the clock moves to `at`, then a write begins or ends, or the state is read. */
type Step =
  | { readonly at: number; readonly begin: string; readonly write: ActivityWrite }
  | { readonly at: number; readonly end: string }
  | { readonly at: number; readonly expect: { readonly inFlight: number; readonly idleMs: number } };

const inQuiet: ActivityWrite = { actor: "operator", namespace: "rc-a" };
const elsewhere: ActivityWrite = { actor: "operator", namespace: "rc-b" };
const kit: ActivityWrite = { actor: "kit", namespace: "rc-a" };

describe("OperatorActivity", () => {
  it.each<[string, readonly Step[]]>([
    ["idle since it was made when nothing was written", [{ at: 250, expect: { inFlight: 0, idleMs: 250 } }]],
    [
      "0 while a write is in flight, counted from its completion after",
      [
        { at: 100, begin: "w", write: inQuiet },
        { at: 900, expect: { inFlight: 1, idleMs: 0 } },
        { at: 1_000, end: "w" },
        { at: 1_400, expect: { inFlight: 0, idleMs: 400 } },
      ],
    ],
    [
      "busy until the last of overlapping writes completes",
      [
        { at: 10, begin: "a", write: inQuiet },
        { at: 20, begin: "b", write: { actor: "operator" } },
        { at: 30, end: "a" },
        { at: 500, expect: { inFlight: 1, idleMs: 0 } },
        { at: 600, end: "b" },
        { at: 650, expect: { inFlight: 0, idleMs: 50 } },
      ],
    ],
    [
      "writes that do not count change nothing, in flight or done",
      [
        { at: 100, begin: "k", write: kit },
        { at: 200, begin: "o", write: elsewhere },
        { at: 300, expect: { inFlight: 0, idleMs: 300 } },
        { at: 400, end: "k" },
        { at: 500, end: "o" },
        { at: 700, expect: { inFlight: 0, idleMs: 700 } },
      ],
    ],
    [
      "a write ended twice is counted out once",
      [
        { at: 10, begin: "a", write: inQuiet },
        { at: 20, begin: "b", write: inQuiet },
        { at: 30, end: "a" },
        { at: 40, end: "a" },
        { at: 50, expect: { inFlight: 1, idleMs: 0 } },
        { at: 60, end: "b" },
        { at: 90, expect: { inFlight: 0, idleMs: 30 } },
      ],
    ],
  ])("%s", (_case, steps) => {
    let now = 0;
    const activity = new OperatorActivity({ now: () => now }, "rc-a");
    const open = new Map<string, () => void>();
    for (const step of steps) {
      now = step.at;
      if ("begin" in step) open.set(step.begin, activity.begin(step.write));
      else if ("end" in step) open.get(step.end)?.();
      else expect({ inFlight: activity.inFlightWrites, idleMs: activity.idleMs }).toEqual(step.expect);
    }
  });

  it("counts every namespace without a quiet namespace", () => {
    let now = 0;
    const activity = new OperatorActivity({ now: () => now });
    const end = activity.begin(elsewhere);
    now = 50;
    expect(activity.inFlightWrites).toBe(1);
    end();
    now = 80;
    expect(activity.idleMs).toBe(30);
  });
});
