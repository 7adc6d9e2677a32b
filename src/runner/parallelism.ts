import type { Contract } from "../contract/load-contract.js";
import { webhooksSerializeScenarios } from "../contract/operator-webhooks.js";
import { UsageError } from "../errors.js";

/** Scenarios side by side for a namespaced operator when the run does not say. */
export const DEFAULT_PARALLEL = 4;

/**
 * How many scenarios the run may have side by side; a UsageError when the
 * contract does not allow what `parallel` asks. Side by side needs an
 * operator confined to its scenario's namespace, and webhooks that each
 * scenario's operator can serve on a port of its own.
 */
export function scenarioParallelism(config: {
  readonly contract: Pick<Contract, "operator">;
  readonly parallel?: number;
}): number {
  const { operator } = config.contract;
  const namespaced = operator.namespaced !== undefined;
  const serialized = webhooksSerializeScenarios(operator.mode === "process" ? operator.webhooks : undefined);
  const parallel = config.parallel ?? (namespaced && serialized === undefined ? DEFAULT_PARALLEL : 1);
  if (!Number.isInteger(parallel) || parallel < 1) {
    throw new UsageError("cli/invalid-parallel", `--parallel ${parallel}: expected a whole number >= 1`);
  }
  if (parallel > 1 && !namespaced) {
    throw new UsageError(
      "cli/parallel-needs-namespaced",
      `--parallel ${parallel}: scenarios can run side by side only when the contract says how to confine the operator to one namespace (operator.namespaced: { arg: "--watch-namespace" } or { env: "WATCH_NAMESPACE" }); a cluster-wide operator in each scenario would act on the other scenarios' objects`,
    );
  }
  if (parallel > 1 && serialized !== undefined) {
    throw new UsageError(
      "cli/parallel-needs-webhook-ports",
      `--parallel ${parallel}: scenarios cannot run side by side: ${serialized}`,
    );
  }
  return parallel;
}

/** Why this run has one scenario at a time although its operator is namespaced, for the console; undefined when it is not so. */
export function oneAtATimeReason(contract: Pick<Contract, "operator">): string | undefined {
  const { operator } = contract;
  if (operator.namespaced === undefined || operator.mode !== "process") return undefined;
  const serialized = webhooksSerializeScenarios(operator.webhooks);
  return serialized === undefined ? undefined : `scenarios run one at a time: ${serialized}`;
}
