import { describe, expect, it } from "vitest";
import { labelSelectorQuery } from "../../../../src/operator/deployed/pod-tracker.js";

describe("labelSelectorQuery", () => {
  it("writes matchLabels as equality terms", () => {
    expect(
      labelSelectorQuery({ matchLabels: { "control-plane": "controller-manager", app: "webapp" } }),
    ).toBe("control-plane=controller-manager,app=webapp");
  });

  it("writes every matchExpressions operator the way the list API parses it", () => {
    expect(
      labelSelectorQuery({
        matchLabels: { app: "webapp" },
        matchExpressions: [
          { key: "tier", operator: "In", values: ["control", "manager"] },
          { key: "canary", operator: "NotIn", values: ["true"] },
          { key: "control-plane", operator: "Exists" },
          { key: "legacy", operator: "DoesNotExist" },
        ],
      }),
    ).toBe("app=webapp,tier in (control,manager),canary notin (true),control-plane,!legacy");
  });

  it("selects everything for an empty selector (the owner chain still narrows it)", () => {
    expect(labelSelectorQuery({})).toBe("");
  });
});
