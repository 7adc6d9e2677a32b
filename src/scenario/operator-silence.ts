import type { Contract } from "../contract/load-contract.js";
import type { OperatorUnderTest } from "../operator/operator-under-test.js";
import type { ApiProxy } from "../proxy/api-proxy.js";
import type { Clock } from "../util/clock.js";
import { queueEvidence, updateDelivered, type Silence } from "./quiescence.js";

/** What a scenario's silence is read from. */
export interface SilenceSources {
  readonly proxy: ApiProxy;
  readonly operator: OperatorUnderTest;
  readonly contract: Contract;
  readonly clock: Clock;
}

/**
 * The operator's silence since `stimulusAt` (a reading of the run's clock),
 * with what its work queues say when it publishes them: the evidence the
 * quiescence rule (quiescence.ts) decides from.
 */
export function operatorSilence(sources: SilenceSources, stimulusAt: number): Silence {
  const { proxy, operator, contract, clock } = sources;
  const now = clock.now();
  const operatorIdleMs = proxy.operatorIdleMs;
  const metrics = contract.operator.mode === "process" ? contract.operator.metrics : undefined;
  const readings = operator.queueReadings;
  const lastDeliveryAt = proxy.lastDeliveryAt;
  return {
    operatorIdleMs,
    sinceStimulusMs: now - stimulusAt,
    ...(metrics && readings
      ? {
          queues: queueEvidence(
            readings,
            {
              stimulusAt,
              lastWriteAt: now - operatorIdleMs,
              ...(lastDeliveryAt === undefined ? {} : { lastDeliveryAt }),
              ...undeliveredKitWrite(proxy),
            },
            metrics.settleMs,
          ),
        }
      : {}),
  };
}

/**
 * The kit's last write, described, when the operator watches its kind and
 * no watch event has shown it that write (or a later state) yet; empty
 * when there is none or it has been shown (queueEvidence's `undelivered`).
 */
function undeliveredKitWrite(proxy: ApiProxy): { undelivered?: string } {
  const { writeLog, readLog } = proxy;
  const last = writeLog
    .query({ actor: "kit" })
    .findLast((e) => e.code >= 200 && e.code < 300 && e.resourceVersion);
  if (!last?.resourceVersion) return {};
  const { group, resource, name } = last;
  if (!name) return {};
  const watched =
    readLog.query({ actor: "operator", verb: "watch", group, resource, succeeded: true }).length > 0;
  if (!watched) return {};
  const object = { group, resource, name, ...(last.namespace ? { namespace: last.namespace } : {}) };
  return updateDelivered(readLog.delivered, object, last.resourceVersion)
    ? {}
    : {
        undelivered: `the kit's ${last.verb} of ${resource}/${name} (resourceVersion ${last.resourceVersion})`,
      };
}
