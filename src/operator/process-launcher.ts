import type { ProcessOperator } from "../contract/load-contract.js";
import type { Logger } from "../util/logger.js";
import { OperatorProcess } from "./operator-process.js";
import type { OperatorLauncher, ScenarioSeat } from "./operator-under-test.js";

/**
 * operator.command: each scenario's operator a local process group of its
 * own, confined to the scenario's namespace when the contract says how.
 */
export function processLauncher(
  operator: ProcessOperator,
  customResource: { readonly group: string; readonly resource: string },
  logger: Logger,
): OperatorLauncher {
  return {
    launch({ namespace, proxy, workDir, kube }: ScenarioSeat) {
      // A namespaced operator is given this scenario's namespace: it sees nothing of other scenarios.
      const scope = operator.namespaced;
      return new OperatorProcess({
        command: {
          argv: scope && "arg" in scope ? [...operator.argv, `${scope.arg}=${namespace}`] : operator.argv,
          env: scope && "env" in scope ? { ...operator.env, [scope.env]: namespace } : operator.env,
          passThroughEnv: operator.passThroughEnv,
          cwd: operator.cwd,
        },
        proxy,
        customResource,
        workDir,
        kube,
        startTimeoutMs: operator.startTimeoutMs,
        logger,
      });
    },
  };
}
