import type { Contract } from "../../contract/load-contract.js";
import { historicalFailures, type HistoricalReadProof } from "../../proxy/historical-reads.js";
import type { WatchFaultProof } from "../../proxy/watch-faults.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import { liveChildObjects, writeEvidence } from "../../scenario/reference-state.js";
import type { Scenario } from "../../scenario/scenario.js";
import type { ReferenceChild } from "../../scenario/spec-references.js";
import { pollUntil, PollTimeoutError } from "../../util/poll.js";
import { forWantOfChildren } from "../shared/no-children.js";
import { defineCheck, type Judgement, type ObserveContext } from "../check.js";
import {
  assertFindable,
  crashAtLine,
  crashLines,
  missedCrash,
  type CrashLine,
  type CrashOutcome,
} from "../shared/crash-lines.js";
import { unsureAfterFault } from "../shared/after-fault.js";
import {
  faultedSpecs,
  updatePathLines,
  walkToUpdate,
  type FaultPath,
  type PathLine,
} from "../shared/update-paths.js";
import {
  allowedByPromises,
  childKinds,
  historyNotes,
  judgedEnd,
  specReference,
  TOUCH_REACTION_MS,
  type StaleViewEnd,
} from "./stale-views.js";

/** How long a restarted operator on a past view may take to make its first write before its view catches up anyway. */
const FIRST_ACT_MS = 5_000;

/** A line of the sample's creation, or one on the way to an update (update-paths.ts). */
export type PastTarget = { readonly line: CrashLine; readonly path?: undefined } | PathLine;

/** A past target's name: its line's id, after its update's name when it is on one's way. */
function pastName({ line, path }: PastTarget): string {
  return path ? `${path.name}: ${line.id}` : line.id;
}

/** A crash that hit its line. */
export type Crashed = Extract<CrashOutcome, { readonly status: "crashed" }>;

/** Where the restart from the past left the scenario. */
export type RestartFromThePastObservation =
  /**
   * Stopped at the crash: it missed its line (missedCrash), or the create it
   * followed has no etcd revision to ask for the state before (etcdRevision).
   */
  | { readonly stage: "crash"; readonly line: CrashLine; readonly crash: CrashOutcome }
  | {
      readonly stage: "restarted";
      readonly line: CrashLine;
      readonly crash: Crashed;
      /** What the historical reads served the restarted operator. */
      readonly history: HistoricalReadProof;
      /** The holds of the catch-up events, by resource, as they were released. */
      readonly catchUp: readonly { readonly resource: string; readonly proof: WatchFaultProof }[];
      /** The end state after the convergence; `made`: the creates up to the crash's. */
      readonly end: StaleViewEnd;
      /** The operator's writes from the crash's on. */
      readonly writes: readonly WriteEntry[];
      readonly operatorLog: readonly string[];
      /** The update whose way the line is on; absent: the sample's creation. */
      readonly path?: FaultPath;
      /** With a path: spec 0's reference children, the lives the per-life values were learned from. */
      readonly learnedFrom?: readonly ReferenceChild[];
    };

/**
 * The etcd revision a resourceVersion names (the state before it, minus
 * one, must exist: 2 or more); undefined when it is not one. Pure.
 */
export function etcdRevision(resourceVersion: string | undefined): number | undefined {
  const revision = Number(resourceVersion);
  return Number.isSafeInteger(revision) && revision >= 2 ? revision : undefined;
}

/**
 * One scenario per create of the reference's sequence: the operator is
 * killed right after the create succeeds, and its restart's first list of
 * every resource is served from the revision just before that create
 * (historical-reads.ts): its caches start without the object it had just
 * made, and catch up through the API server's events. On the way to each
 * update, the same after the lines the budget chooses (a delete or an
 * update as well as a create; not status writes): the restarted operator
 * sees the objects as they were before its last write of that way (a
 * StatefulSet it just scaled down, still large).
 */
export const restartFromThePast = defineCheck<PastTarget, RestartFromThePastObservation>({
  id: "staleness/restart-from-the-past",
  level: "MUST",
  summary:
    "restarted after a crash with its caches listed from the state before its last create, it deletes and recreates nothing and ends as the reference",
  references: (contract) => [0, ...faultedSpecs(contract)],
  targets({ contract, references }) {
    const reference = references.get(0);
    const creates: PastTarget[] = reference
      ? crashLines(reference, contract)
          .filter((l) => l.write.effect === "created")
          .map((line) => ({ line }))
      : [];
    const onUpdates = updatePathLines({ contract, references }).filter((t) => !t.line.write.subresource);
    return creates.length + onUpdates.length > 0
      ? [...creates, ...onUpdates]
      : {
          target: "write sequence",
          skip: forWantOfChildren(
            reference,
            "the operator created nothing on its way to the reference: no past lacks what it made",
          ),
        };
  },
  targetName: pastName,
  skipTarget: ({ line }) => line.timing,
  observer: {
    scenario: "past",
    scenarioOf: ({ line, path }) => (path ? `past-s${path.spec}-${line.ordinal}` : `past-${line.ordinal}`),
    async observe(context, target) {
      const { line, path } = target;
      assertFindable(line);
      context.progress(`restart from the past before write ${pastName(target)}`);
      const zero = specReference(context, 0);
      const reference = path
        ? { children: target.reference, ...(target.roles ? { roles: target.roles } : {}) }
        : zero;
      const scenario = await context.open();
      const progress = (text: string) => context.progress(text);
      const stimulus = path && (await walkToUpdate(scenario, context.contract, path.spec, progress));
      const crash = await crashAtLine(context, scenario, line, reference.roles, stimulus);
      if (crash.status !== "crashed") return { stage: "crash", line, crash };
      const { hit, kill } = crash;
      const revision = etcdRevision(hit.resourceVersion);
      if (revision === undefined) return { stage: "crash", line, crash };
      const restartRun = (kill?.run ?? 1) + 1;
      const past = scenario.proxy.armHistory({ resourceVersion: String(revision - 1), fromRun: restartRun });
      // The watches from the past would catch up within milliseconds, before the first reconcile
      // could act on the past: held for a while, they leave the restarted operator on a stale view
      // (as an API server whose cache lags serves one), then deliver everything in order.
      const holds = stalledKinds(context.contract, reference.children).map((kind) =>
        scenario.proxy.armWatch({ mode: "hold", ...kind, match: { namespace: scenario.namespace } }),
      );
      let held: WatchFaultProof[] = [];
      try {
        context.progress(`restarting the operator from resourceVersion ${revision - 1}, before ${line.id}`);
        await scenario.restartOperator();
        await untilOperatorActs(context, scenario, restartRun);
        held = holds.map((h) => h.release());
      } finally {
        if (held.length === 0) for (const h of holds) h.release();
      }
      await scenario.converge("convergence after the restart from the past");
      const history = past.proof();
      const live = await liveChildObjects(scenario);
      return {
        stage: "restarted",
        line,
        crash,
        history,
        catchUp: held.map((proof, i) => ({ resource: holds[i]?.spec.resource ?? "?", proof })),
        end: {
          reference: reference.children,
          ...(reference.roles ? { roles: reference.roles } : {}),
          live,
          made: scenario
            .operatorWrites({ effect: "created" })
            .filter((e) => e.seq <= hit.seq && !e.subresource),
          // On an update's way, the deletes before the crash are the update's own.
          deletes: scenario.operatorWrites({ effect: "deleted", ...(path ? { after: hit.seq } : {}) }),
        },
        writes: scenario.operatorWrites({ after: hit.seq - 1 }),
        operatorLog: await scenario.operatorLog(10),
        ...(path ? { path, learnedFrom: target.learnedFrom } : {}),
      };
    },
  },
  judge(observation, contract): Judgement {
    if (observation.stage === "crash") {
      return missedCrash(observation.line, observation.crash) ?? notAnEtcdRevision(observation.crash);
    }
    const { line, crash, history, catchUp, writes, operatorLog, path } = observation;
    const { hit } = crash;
    const proof = [
      ...crash.proof,
      ...historyNotes(history),
      `the catch-up held at first: ${catchUp.map((h) => `${h.resource} ${h.proof.taken.length} event(s)`).join(", ")}, delivered in order once the restarted operator had acted`,
    ];
    const failures = historicalFailures(history);
    if (failures.length > 0) {
      return {
        status: "inconclusive",
        message: `the past was out of the API server's reach: ${failures.join("; ")}`,
        evidence: { notes: proof },
      };
    }
    const ofHit = history.lists.some((l) => l.group === hit.group && l.resource === hit.resource);
    if (!ofHit) {
      return {
        status: "inconclusive",
        message: `the restarted operator listed no ${hit.resource} after the restart: its view of them was not served from the past`,
        evidence: { notes: proof },
      };
    }
    const { comparison, volatile, problems, excused, update } = judgedEnd(observation, contract);
    const evidence = {
      writes: writes.map(writeEvidence),
      ...(comparison.diffs.length > 0 ? { diffs: comparison.diffs } : {}),
      notes: [...proof, ...problems, ...excused, ...update, ...volatile, ...comparison.clockMade],
    };
    const before = path ? `${path.name}: ${line.id}` : line.id;
    if (problems.length > 0) {
      return {
        status: "failed",
        message: `restarted with caches from before ${before}: ${problems.join("; ")}`,
        evidence: { ...evidence, operatorLog },
      };
    }
    const unsure = unsureAfterFault(comparison, evidence);
    if (unsure) return unsure;
    return {
      status: "passed",
      message: `restarted with caches from resourceVersion ${history.resourceVersion} (before ${before}), it kept every object it had made${allowedByPromises(excused)} and converged to the reference${path ? ` of ${path.name}` : ""}`,
      evidence,
    };
  },
});

/** The verdict of a crash that hit its line but whose create has no etcd revision to go back from. */
function notAnEtcdRevision(crash: CrashOutcome): Judgement {
  const resourceVersion = crash.status === "crashed" ? crash.hit.resourceVersion : undefined;
  return {
    status: "inconclusive",
    message: `the create's resourceVersion ${resourceVersion ?? "(none)"} is not an etcd revision: the state before it cannot be asked for`,
  };
}

/** The resources whose catch-up events are held after a restart from the past: the custom resource's and its children's. */
function stalledKinds(
  contract: Pick<Contract, "customResource">,
  children: readonly ReferenceChild[],
): { group: string; resource: string }[] {
  const { group, resource } = contract.customResource;
  return [
    { group, resource },
    ...childKinds(children).map((k) => ({ group: k.group, resource: k.resource })),
  ];
}

/**
 * Waits until the restarted run has made a write (or tried one) and then
 * gives it TOUCH_REACTION_MS more to act on what it sees; an operator that
 * finds nothing to do in the past gets the same time from its start.
 */
async function untilOperatorActs(context: ObserveContext, scenario: Scenario, run: number): Promise<void> {
  const acted = () => scenario.proxy.writeLog.query({ actor: "operator" }).some((e) => (e.run ?? 0) >= run);
  await pollUntil(
    () => (acted() ? { done: true, value: undefined } : { done: false, reason: "no write yet" }),
    {
      description: "a write of the restarted operator",
      timeoutMs: FIRST_ACT_MS,
      intervalMs: 50,
      signal: context.deps.signal,
    },
  ).catch((error: unknown) => {
    if (!(error instanceof PollTimeoutError)) throw error;
  });
  await new Promise((resolve) => setTimeout(resolve, TOUCH_REACTION_MS));
}
