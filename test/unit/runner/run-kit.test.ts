import { describe, expect, it } from "vitest";
import type { Contract } from "../../../src/contract/load-contract.js";
import { UsageError } from "../../../src/errors.js";
import { DEFAULT_PARALLEL, scenarioParallelism } from "../../../src/runner/run-kit.js";

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
