import { describe, expect, it } from "vitest";
import {
  conditionsOf,
  observedGenerationOf,
  readinessCondition,
} from "../../../src/contract/observed-generation.js";

// The one reader of observedGeneration: readiness, the status claims of the conflict suite and the
// status-stability checks all read it here.
describe("observedGenerationOf", () => {
  it.each<[string, unknown, number | undefined]>([
    ["status.observedGeneration", { status: { observedGeneration: 3 } }, 3],
    [
      "the Ready condition's, before the status's",
      {
        status: {
          observedGeneration: 2,
          conditions: [{ type: "Ready", status: "True", observedGeneration: 3 }],
        },
      },
      3,
    ],
    [
      "the Available condition's when there is no Ready",
      { status: { conditions: [{ type: "Available", observedGeneration: 4 }] } },
      4,
    ],
    [
      "Ready before Available",
      {
        status: {
          conditions: [
            { type: "Available", observedGeneration: 4 },
            { type: "Ready", observedGeneration: 5 },
          ],
        },
      },
      5,
    ],
    [
      "the status's when the condition names none",
      { status: { observedGeneration: 6, conditions: [{ type: "Ready", status: "True" }] } },
      6,
    ],
    ["none", { status: { conditions: [{ type: "Progressing", observedGeneration: 7 }] } }, undefined],
    ["not a whole number", { status: { observedGeneration: "3" } }, undefined],
    ["no status at all", {}, undefined],
    ["not an object", undefined, undefined],
  ])("%s", (_name, object, expected) => {
    expect(observedGenerationOf(object)).toBe(expected);
  });

  it("reads conditions with a type only, and picks Ready, else Available", () => {
    const status = { conditions: [{ status: "True" }, { type: "Available", status: "True" }, "junk"] };
    expect(conditionsOf(status).map((c) => c.type)).toEqual(["Available"]);
    expect(readinessCondition({ status })?.type).toBe("Available");
    expect(readinessCondition({ status: {} })).toBeUndefined();
  });
});
