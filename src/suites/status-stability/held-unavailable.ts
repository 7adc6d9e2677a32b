import { setTimeout as delay } from "node:timers/promises";
import { conditionsOf } from "../../contract/observed-generation.js";
import type { Contract } from "../../contract/load-contract.js";
import type { KubeObject } from "../../kube/kube-client.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import type { Evidence } from "../../report/report-model.js";
import { liveChildren, writeEvidence, type ChildRecord } from "../../scenario/reference-state.js";
import { NeverQuiet, type Scenario } from "../../scenario/scenario.js";
import { defineCheck, type Judgement } from "../check.js";
import { ObjectKinds } from "../shared/promised.js";
import { churnVerdict, movedWithoutTransition } from "./last-transition-time.js";

/** How long the kit keeps Pods from being created once the sample exists. */
export const HOLD_MS = 5000;
/** The ResourceQuota that holds them: no Pod at all in the scenario's namespace. */
export const HOLD_QUOTA = "reconcile-conformance-hold";
/** A condition that flipped and back this many times within the hold is a loop, not a transient. */
export const FLIP_LOOP = 2;

const TARGET = "a child held unavailable";

/** A Pod creation the hold refused: an Event of a workload's controller, or the operator's own write. */
export interface HoldRefusal {
  /** "ReplicaSet/hello-5d8f" (an Event's object) or "operator write 12". */
  readonly by: string;
  readonly message: string;
}

export interface HeldUnavailableObservation {
  readonly outcome: "settled" | "never-quiet";
  readonly holdMs: number;
  /** The write log's seq of the kit's quota create and delete: the hold is the writes between them. */
  readonly heldAfter: number;
  readonly releasedAt: number;
  readonly refusals: readonly HoldRefusal[];
  /** Every operator write of the scenario, from the sample's create to the end. */
  readonly writes: readonly WriteEntry[];
  /** The children there were at the end: they tell the kinds of the writes (for their promises). */
  readonly children: readonly ChildRecord[];
  /** The custom resource's status at the end. */
  readonly status?: unknown;
  /** NeverQuiet's message, when the release did not settle. */
  readonly message?: string;
  readonly notes: readonly string[];
  readonly convergedBy: readonly string[];
}

/**
 * While a child cannot become available, a correct operator reports so once
 * and keeps saying the same: a condition whose status stays keeps its
 * lastTransitionTime, and no condition swings back and forth. On kwok a
 * Deployment is available within a second, so a loop that restamps or flips
 * a condition while it waits has no time to show; this scenario makes the
 * time. Before the sample is created the kit puts a ResourceQuota of zero
 * Pods in the namespace (a workload controller's Pod creations are refused,
 * as on a full cluster), holds it for HOLD_MS, removes it and lets the
 * sample converge; the operator's whole write history is judged.
 */
export const heldUnavailable = defineCheck<typeof TARGET, HeldUnavailableObservation>({
  id: "status-stability/held-unavailable",
  level: "MUST",
  summary:
    "while a child is held unavailable, no condition gets a new lastTransitionTime without a new status, and none flips back and forth",
  targets: () => [TARGET],
  targetName: (target) => target,
  observer: {
    scenario: "held-unavailable",
    async observe(context) {
      const scenario = await context.open();
      await scenario.startOperator();
      const quota = await holdPods(scenario);
      await scenario.createSample();
      context.progress(`holding Pods in ${scenario.namespace} for ${HOLD_MS / 1000} s`);
      await delay(HOLD_MS, undefined, { signal: context.deps.signal });
      const refusals = await refusedPodCreations(scenario);
      await scenario.kit.delete({
        apiVersion: "v1",
        kind: "ResourceQuota",
        name: HOLD_QUOTA,
        namespace: scenario.namespace,
      });
      const releasedAt = scenario.proxy.writeLog.lastSeq;
      context.progress(`released the hold in ${scenario.namespace}`);
      const common = { holdMs: HOLD_MS, heldAfter: quota, releasedAt, refusals };
      let converged: KubeObject;
      try {
        converged = await scenario.converge("convergence after the hold");
      } catch (error) {
        if (!(error instanceof NeverQuiet)) throw error;
        return {
          ...common,
          outcome: "never-quiet",
          writes: scenario.operatorWrites(),
          children: await liveChildren(scenario).catch(() => []),
          message: error.message,
          notes: [...error.notes],
          convergedBy: [...scenario.convergedBy],
        };
      }
      return {
        ...common,
        outcome: "settled",
        writes: scenario.operatorWrites(),
        children: await liveChildren(scenario),
        status: converged.status,
        notes: [],
        convergedBy: [...scenario.convergedBy],
      };
    },
  },
  judge(observation, contract): Judgement {
    const kinds = new ObjectKinds(contract, observation.children);
    const churn = movedWithoutTransition(observation.writes, contract, kinds);
    const holdNote = `Pods held for ${observation.holdMs / 1000} s: ${observation.refusals.length} creation(s) refused${observation.refusals.length > 0 ? ` (${observation.refusals[0]?.by}: ${observation.refusals[0]?.message})` : ""}`;
    if (churn.length > 0) {
      const verdict = churnVerdict(churn);
      return {
        ...verdict,
        evidence: { ...verdict.evidence, notes: [...(verdict.evidence?.notes ?? []), holdNote] },
      };
    }
    const held = observation.writes.filter(
      (w) => w.seq > observation.heldAfter && w.seq < observation.releasedAt,
    );
    const loops = flipLoops(held, contract).filter((f) => f.roundTrips >= FLIP_LOOP);
    if (loops.length > 0) {
      return {
        status: "failed",
        message: `while a child was held unavailable and nothing else changed, ${loops.map((l) => `condition ${l.type} went ${l.statuses.join("→")}`).join("; ")}: a loop that flips a condition and back`,
        evidence: {
          writes: loops.flatMap((l) => l.writes).map(writeEvidence),
          notes: [holdNote],
        },
      };
    }
    if (observation.outcome === "never-quiet") {
      return {
        status: "inconclusive",
        message: observation.message ?? "the operator never fell quiet after the hold",
        evidence: { notes: [...observation.notes, holdNote] },
      };
    }
    const stated = observation.writes.some(
      (w) => isCustomResourceWrite(w, contract) && conditionsIn(w.body) !== undefined,
    );
    if (!stated && conditionsOf(observation.status).length === 0)
      return { status: "skipped", message: "the custom resource reports no conditions" };
    if (observation.refusals.length === 0) {
      return {
        status: "skipped",
        message: `nothing was held unavailable: no Pod creation in the namespace was refused in ${observation.holdMs / 1000} s (the operator's children make no Pods, or made them before the hold)`,
        evidence: { notes: observation.convergedBy.map((line) => `converged: ${line}`) },
      };
    }
    const statusWrites = held.filter((w) => isCustomResourceWrite(w, contract) && w.effect === "changed");
    const evidence: Evidence = {
      writes: statusWrites.map(writeEvidence),
      notes: [holdNote, ...observation.convergedBy.map((line) => `converged: ${line}`)],
    };
    return {
      status: "passed",
      message: `with Pods held for ${observation.holdMs / 1000} s, ${statusWrites.length} write(s) changed the custom resource; no condition got a new lastTransitionTime without a new status, none flipped back and forth`,
      evidence,
    };
  },
});

/** Creates the hold: a quota of zero Pods in the scenario's namespace; returns its create's seq. */
async function holdPods(scenario: Scenario): Promise<number> {
  await scenario.kit.create({
    apiVersion: "v1",
    kind: "ResourceQuota",
    metadata: { name: HOLD_QUOTA, namespace: scenario.namespace },
    spec: { hard: { pods: "0" } },
  });
  return scenario.proxy.writeLog.lastSeq;
}

/** The Pod creations the hold refused so far: workload controllers' FailedCreate Events, the operator's refused creates. */
async function refusedPodCreations(scenario: Scenario): Promise<HoldRefusal[]> {
  const events = await scenario.kit.list<
    KubeObject & { reason?: string; message?: string; involvedObject?: { kind?: string; name?: string } }
  >("v1", "Event", { namespace: scenario.namespace });
  const fromEvents = events
    .filter((e) => e.reason === "FailedCreate" && (e.message ?? "").includes(HOLD_QUOTA))
    .map((e) => ({
      by: `${e.involvedObject?.kind ?? "?"}/${e.involvedObject?.name ?? "?"}`,
      message: e.message ?? "",
    }));
  const fromOperator = scenario
    .operatorWrites()
    .filter((w) => w.verb === "create" && w.group === "" && w.resource === "pods" && w.code === 403)
    .map((w) => ({
      by: `operator write ${w.seq}`,
      message: `create pods/${w.name ?? ""}: ${w.reason ?? "Forbidden"}`,
    }));
  return [...fromEvents, ...fromOperator];
}

function isCustomResourceWrite(write: WriteEntry, contract: Pick<Contract, "customResource">): boolean {
  return (
    write.actor === "operator" &&
    write.group === contract.customResource.group &&
    write.resource === contract.customResource.resource &&
    write.verb !== "delete"
  );
}

/** The conditions a write's body states, or undefined when it states none (a body that is no object, or has no status.conditions list). */
function conditionsIn(body: unknown): ReturnType<typeof conditionsOf> | undefined {
  const status = (body as { status?: { conditions?: unknown } } | undefined)?.status;
  return Array.isArray(status?.conditions) ? conditionsOf(status) : undefined;
}

/** A condition's statuses as the operator's writes stated them, and how often it went somewhere and came back. */
export interface FlipLoop {
  readonly type: string;
  /** Its statuses, write by write, with repeats of one status collapsed. */
  readonly statuses: readonly string[];
  /** How many times it returned to the status it had two changes before (True→False→True is one). */
  readonly roundTrips: number;
  /** The writes that changed its status. */
  readonly writes: readonly WriteEntry[];
}

/**
 * For each condition the operator's writes of the custom resource state
 * (in write order; only writes that changed the stored object, with a body
 * that lists conditions: a patch that names no condition says nothing of
 * one), the sequence of its statuses and its round trips. Pure.
 */
export function flipLoops(
  writes: readonly WriteEntry[],
  contract: Pick<Contract, "customResource">,
): FlipLoop[] {
  const byType = new Map<string, { statuses: string[]; writes: WriteEntry[] }>();
  for (const write of writes) {
    if (!isCustomResourceWrite(write, contract) || write.effect !== "changed") continue;
    for (const condition of conditionsIn(write.body) ?? []) {
      const status = String(condition.status);
      const seen = byType.get(condition.type) ?? { statuses: [], writes: [] };
      byType.set(condition.type, seen);
      if (seen.statuses.at(-1) === status) continue;
      seen.statuses.push(status);
      seen.writes.push(write);
    }
  }
  return [...byType].map(([type, { statuses, writes: changes }]) => ({
    type,
    statuses,
    roundTrips: statuses.filter((s, i) => i >= 2 && statuses[i - 2] === s).length,
    writes: changes,
  }));
}
