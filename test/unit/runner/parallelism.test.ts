import { describe, expect, it } from "vitest";
import type { Contract } from "../../../src/contract/load-contract.js";
import { UsageError } from "../../../src/errors.js";
import type { OperatorWebhooks } from "../../../src/contract/operator-webhooks.js";
import { DEFAULT_PARALLEL, oneAtATimeReason, scenarioParallelism } from "../../../src/runner/parallelism.js";

const contract = (namespaced?: Contract["operator"]["namespaced"]) =>
  ({ operator: { ...(namespaced ? { namespaced } : {}) } }) as unknown as Contract;

describe("scenarioParallelism", () => {
  it("is 1 for an operator that watches the whole cluster, DEFAULT_PARALLEL for a namespaced one", () => {
    expect(scenarioParallelism({ contract: contract() })).toBe(1);
    expect(scenarioParallelism({ contract: contract({ arg: "--watch-namespace" }) })).toBe(DEFAULT_PARALLEL);
    expect(scenarioParallelism({ contract: contract({ env: "WATCH_NAMESPACE" }), parallel: 2 })).toBe(2);
    expect(scenarioParallelism({ contract: contract({ env: "WATCH_NAMESPACE" }), parallel: 1 })).toBe(1);
  });

  it("refuses side by side scenarios for a cluster-wide operator, naming the contract field", () => {
    const error = (() => {
      try {
        scenarioParallelism({ contract: contract(), parallel: 4 });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain("operator.namespaced");
    expect(() => scenarioParallelism({ contract: contract({ arg: "--ns" }), parallel: 0 })).toThrow(
      UsageError,
    );
  });
});

describe("scenarioParallelism with webhooks", () => {
  const withWebhooks = (webhooks: Partial<OperatorWebhooks>) =>
    ({
      operator: {
        mode: "process",
        namespaced: { arg: "--watch-namespace" },
        webhooks: {
          configurations: [],
          port: 9443,
          certDir: { underTmpdir: true },
          conversion: [],
          ...webhooks,
        },
      },
    }) as unknown as Contract;

  it("runs one scenario at a time when every operator must serve on the same port, and says why", () => {
    const fixed = withWebhooks({});
    expect(scenarioParallelism({ contract: fixed })).toBe(1);
    expect(oneAtATimeReason(fixed)).toContain("port 9443 (operator.webhooks.portArg or portEnv");
    expect(() => scenarioParallelism({ contract: fixed, parallel: 2 })).toThrow(
      "--parallel 2: scenarios cannot run side by side: every scenario's operator serves its webhooks on port 9443",
    );
  });

  it("runs side by side when each operator can be given a port of its own", () => {
    const told = withWebhooks({ portTelling: { arg: "--webhook-port" } });
    expect(scenarioParallelism({ contract: told })).toBe(DEFAULT_PARALLEL);
    expect(oneAtATimeReason(told)).toBeUndefined();
  });

  it("runs one at a time with a conversion webhook, one for the whole cluster, port or no port", () => {
    const converting = withWebhooks({
      portTelling: { arg: "--webhook-port" },
      conversion: ["widgets.example.com"],
    });
    expect(scenarioParallelism({ contract: converting })).toBe(1);
    expect(oneAtATimeReason(converting)).toContain("converts widgets.example.com");
  });
});
