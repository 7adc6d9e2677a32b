import type { ProcessOperator } from "../contract/load-contract.js";
import type { Logger } from "../util/logger.js";
import { portTold, scenarioConfigurations, type WebhookServing } from "../webhooks/webhook-serving.js";
import { WebhookServingOperator } from "../webhooks/webhook-serving-operator.js";
import { OperatorProcess } from "./operator-process.js";
import type { OperatorLauncher, ScenarioSeat } from "./operator-under-test.js";

/**
 * operator.command: each scenario's operator a local process group of its
 * own, confined to the scenario's namespace when the contract says how, and
 * serving its own webhooks when the contract has them (src/webhooks/).
 */
export function processLauncher(
  operator: ProcessOperator,
  customResource: { readonly group: string; readonly resource: string },
  logger: Logger,
  serving?: WebhookServing,
): OperatorLauncher {
  return {
    launch(seat: ScenarioSeat) {
      const { namespace, proxy, workDir, kube } = seat;
      // A namespaced operator is given this scenario's namespace: it sees nothing of other scenarios.
      const scope = operator.namespaced;
      const process = (told: { argv: readonly string[]; env: Readonly<Record<string, string>> }) =>
        new OperatorProcess({
          command: {
            argv: [
              ...operator.argv,
              ...(scope && "arg" in scope ? [`${scope.arg}=${namespace}`] : []),
              ...told.argv,
            ] as [string, ...string[]],
            env: {
              ...operator.env,
              ...(scope && "env" in scope ? { [scope.env]: namespace } : {}),
              ...told.env,
            },
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
      if (serving === undefined) return process({ argv: [], env: {} });
      const { webhooks } = serving;
      return new WebhookServingOperator({
        operatorFor: (port) => {
          const told = portTold(webhooks, port);
          return process({ argv: [...serving.argv, ...told.argv], env: { ...serving.env, ...told.env } });
        },
        configurationsFor: (port) => scenarioConfigurations(serving, namespace, port),
        // A conversion webhook is the CRD's, one for the cluster: it is always on the contract's port.
        port: webhooks.portTelling && webhooks.conversion.length === 0 ? "free" : webhooks.port,
        ca: serving.certificate.cert,
        kube,
        answerTimeoutMs: operator.startTimeoutMs,
      });
    },
  };
}
