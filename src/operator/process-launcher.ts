import type { ProcessOperator } from "../contract/load-contract.js";
import { metricsTold } from "../contract/operator-metrics.js";
import { systemClock, type Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { portTold, scenarioConfigurations, type WebhookServing } from "../webhooks/webhook-serving.js";
import { WebhookServingOperator } from "../webhooks/webhook-serving-operator.js";
import { MetricsReadingOperator } from "./metrics/metrics-reading-operator.js";
import { OperatorProcess } from "./operator-process.js";
import type { OperatorLauncher, OperatorUnderTest, ScenarioSeat } from "./operator-under-test.js";

/** Flags and variables the kit adds to the operator's command line and environment. */
interface Told {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

const NOTHING_TOLD: Told = { argv: [], env: {} };

const joined = (a: Told, b: Told): Told => ({ argv: [...a.argv, ...b.argv], env: { ...a.env, ...b.env } });

/**
 * operator.command: each scenario's operator a local process group of its
 * own, confined to the scenario's namespace when the contract says how,
 * serving its own webhooks when the contract has them (src/webhooks/), and
 * publishing its work queues' metrics on a port of its own when the
 * contract says how (src/operator/metrics/).
 */
export function processLauncher(
  operator: ProcessOperator,
  customResource: { readonly group: string; readonly resource: string },
  logger: Logger,
  serving?: WebhookServing,
  clock: Clock = systemClock,
): OperatorLauncher {
  return {
    launch(seat: ScenarioSeat) {
      const { namespace, proxy, workDir, kube } = seat;
      // A namespaced operator is given this scenario's namespace: it sees nothing of other scenarios.
      const scope = operator.namespaced;
      const process = (told: Told) =>
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
      const servingWebhooks = (told: Told): OperatorUnderTest => {
        if (serving === undefined) return process(told);
        const { webhooks } = serving;
        return new WebhookServingOperator({
          operatorFor: (port) => process(joined(told, joined(serving, portTold(webhooks, port)))),
          configurationsFor: (port) => scenarioConfigurations(serving, namespace, port),
          // A conversion webhook is the CRD's, one for the cluster: it is always on the contract's port.
          port: webhooks.portTelling && webhooks.conversion.length === 0 ? "free" : webhooks.port,
          ca: serving.certificate.cert,
          kube,
          answerTimeoutMs: operator.startTimeoutMs,
        });
      };
      const { metrics } = operator;
      if (metrics === undefined) return servingWebhooks(NOTHING_TOLD);
      return new MetricsReadingOperator({
        operatorFor: (port) => servingWebhooks(metricsTold(metrics, port)),
        path: metrics.path,
        clock,
      });
    },
  };
}
