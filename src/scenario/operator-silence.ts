import type { Contract } from "../contract/load-contract.js";
import type { OperatorUnderTest } from "../operator/operator-under-test.js";
import type { ApiProxy } from "../proxy/api-proxy.js";
import type { Clock } from "../util/clock.js";
import {
  describeQuietDecisions,
  queueEvidence,
  quietBy,
  updateDelivered,
  updateRead,
  type QuietBy,
  type QuietDecision,
  type Silence,
} from "./quiescence.js";

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
  if (!operatorWatches(proxy, group, resource)) return {};
  const object = { group, resource, name, ...(last.namespace ? { namespace: last.namespace } : {}) };
  return updateDelivered(readLog.delivered, object, last.resourceVersion)
    ? {}
    : {
        undelivered: `the kit's ${last.verb} of ${resource}/${name} (resourceVersion ${last.resourceVersion})`,
      };
}

/**
 * A scenario's quiescence: the evidence of each wait (operatorSilence), the
 * rule's answer (quietBy), and a record of which evidence decided every wait
 * that ended, for the verdicts' evidence (note).
 */
export class ScenarioQuiescence {
  /** Each time a wait of the scenario found the operator done: by which evidence, and why not the queues. */
  readonly decisions: QuietDecision[] = [];

  constructor(private readonly sources: SilenceSources) {}

  /** The operator's silence since `stimulusAt` (a reading of the run's clock), queues included when published. */
  silence(stimulusAt: number): Silence {
    return operatorSilence(this.sources, stimulusAt);
  }

  /** Which evidence says the operator is done (quiescence.ts), or undefined; each decision is kept. */
  quietBy(silence: Silence): QuietBy | undefined {
    const by = quietBy(silence, this.sources.contract.quietPeriodMs);
    if (by !== undefined) {
      this.decisions.push({
        by,
        ...(by === "silence" && silence.queues ? { queues: silence.queues.reason } : {}),
      });
    }
    return by;
  }

  /** Whether the operator is done, by either evidence (quietBy). */
  isQuiet(silence: Silence): boolean {
    return this.quietBy(silence) !== undefined;
  }

  /**
   * One line of evidence: which evidence decided the scenario's waits
   * ("quiescence: 4 wait(s) decided by the operator's work queues, 1 by
   * silence (queues: ...)"); undefined when no wait decided.
   */
  note(): string | undefined {
    return describeQuietDecisions(this.decisions, this.sources.contract.quietPeriodMs);
  }
}

/** A spec update of the custom resource the operator has to be shown before a readiness that names no generation counts. */
export interface PendingUpdate {
  /** Which spec (1-based update number). */
  readonly spec: number;
  /** The resourceVersion the kit's update produced. */
  readonly resourceVersion: string;
  /** Whether a watch event, or a get or list served after the update, has shown it to the operator. */
  readonly delivered: () => boolean;
}

/**
 * The kit's last spec write (`last`, answered at `answeredAt`), when it is
 * an update and the operator watches the custom resource: a create has no
 * earlier answer to mistake, and an operator that does not watch has no
 * delivery to wait for (silence alone decides, as before).
 */
export function pendingUpdate(
  proxy: ApiProxy,
  customResource: {
    readonly group: string;
    readonly resource: string;
    readonly namespace: string;
    readonly name: string;
  },
  last: { readonly spec: number; readonly seq: number } | undefined,
  answeredAt: string | undefined,
): PendingUpdate | undefined {
  if (!last || last.spec === 0) return undefined;
  const { group, resource } = customResource;
  const written = proxy.writeLog.query({ actor: "kit", group, resource }).find((e) => e.seq === last.seq);
  const { readLog } = proxy;
  if (!written?.resourceVersion || written.verb === "create" || !operatorWatches(proxy, group, resource)) {
    return undefined;
  }
  const resourceVersion = written.resourceVersion;
  return {
    spec: last.spec,
    resourceVersion,
    // A watch event, or a get or list (a relist after the watch ended) that showed the update.
    delivered: () =>
      updateDelivered(readLog.delivered, customResource, resourceVersion) ||
      (answeredAt !== undefined &&
        updateRead(
          readLog.query({ actor: "operator", group, resource }).filter((r) => r.time > answeredAt),
          customResource,
          resourceVersion,
        )),
  };
}

/** Whether the operator has watched objects of this kind through the proxy (one watch answered is enough). */
function operatorWatches(proxy: ApiProxy, group: string, resource: string): boolean {
  return (
    proxy.readLog.query({ actor: "operator", verb: "watch", group, resource, succeeded: true }).length > 0
  );
}
