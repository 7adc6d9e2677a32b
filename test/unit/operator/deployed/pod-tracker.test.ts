import { describe, expect, it } from "vitest";
import {
  crashVictim,
  labelSelectorQuery,
  type OperatorPod,
} from "../../../../src/operator/deployed/pod-tracker.js";

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

describe("crashVictim", () => {
  const pod = (name: string, phase = "Pending"): OperatorPod => ({
    name,
    uid: `uid-${name}`,
    phase,
    running: false,
  });

  it("is the only live Pod, even while its status still says Pending", () => {
    expect(crashVictim([pod("op-1")])?.name).toBe("op-1");
  });

  it("is nobody when several Pods live and none runs: there is no telling which one wrote", () => {
    expect(crashVictim([pod("op-1"), pod("op-2")])).toBeUndefined();
  });

  it("is nobody without a Pod", () => {
    expect(crashVictim([])).toBeUndefined();
  });
});
