import type { Contract } from "../../contract/load-contract.js";
import type { KubeObject } from "../../kube/kube-client.js";
import { isEffective } from "../../proxy/write-effect.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import { volatileOnly } from "../../contract/promises.js";
import { describeClockWrite, ticksApart } from "../../scenario/clock-marks.js";
import { describeRef, writeEvidence, type ChildRecord } from "../../scenario/reference-state.js";
import { defineCheck, type Judgement } from "../check.js";
import { maybeTickNote, maybeTicksApart } from "../shared/clock-children.js";
import { changedOnlyVolatile, ObjectKinds, sortByPromises } from "../shared/promised.js";
import {
  neverQuietWrites,
  restartAndTouches,
  shown,
  TARGET,
  unreadChanges,
  type SettledObservation,
} from "./restart-and-touches.js";

/**
 * After convergence, a restart and foreign touches cause no write that
 * changes anything. What the contract's promises allow (a
 * recreated-by-design child, a heartbeat in a volatile field) is not
 * counted, and each such write is named in the evidence.
 */
export const noAvoidableWrites = defineCheck({
  id: "status-stability/no-avoidable-writes",
  level: "MUST",
  summary: "after convergence, a restart and foreign touches cause no write that changes anything",
  targets: () => [TARGET],
  targetName: (target) => target,
  observer: restartAndTouches,
  judge(observation, contract): Judgement {
    if (observation.outcome === "never-quiet") {
      const { state, effective, runaway, judged, notes } = neverQuietWrites(observation, contract);
      return judged
        ? {
            status: "failed",
            message: `${state}: ${effective.length} write(s) changed stored state${runaway ? `, ${runaway}` : ""} (${observation.message})`,
            evidence: { writes: shown(effective), notes },
          }
        : {
            status: "inconclusive",
            message: observation.message,
            evidence: { writes: shown(observation.writes), notes },
          };
    }
    // A tick of the operator's own clock (a child made, the status that records it) answers neither
    // the restart nor the touches.
    const { ticks, rest: answers } = ticksApart(observation.after);
    const { maybeTicks, rest: after } = maybeTicksApart(answers, clockSuspected(observation, contract));
    const kinds = new ObjectKinds(contract, observation.reference.children);
    const sorted = sortByPromises(after.filter(isEffective), kinds);
    const avoidable = sorted.counted;
    const ambiguous = after.filter((e) => e.effect === "ambiguous");
    const identity = identityChanges(observation, kinds, maybeTicks);
    const allowed = [
      ...sorted.excused.map((e) => `not counted: ${e.why}`),
      ...identity.excused,
      ...ticks
        .filter(isEffective)
        .map((e) => `not counted: #${e.seq}, made by the operator's clock: ${describeClockWrite(e)}`),
    ];
    const undecided = [...sorted.unknown.map(unreadChanges), ...identity.undecided];
    const crMoved = customResourceMovedByOthers(observation.settled, observation.customResourceTouch, after);
    const uncounted = [
      ...allowed,
      ...undecided,
      ...ambiguous.map((e) => `ambiguous (not counted): #${e.seq} ${e.effectWhy ?? ""}`),
      ...maybeTicks.map(maybeTickNote),
    ];
    if (avoidable.length > 0 || identity.problems.length > 0) {
      return {
        status: "failed",
        message: `${avoidable.length} operator write(s) changed stored state${identity.problems.length > 0 ? `; ${identity.problems.join("; ")}` : ""}`,
        evidence: {
          writes: avoidable.map(writeEvidence),
          notes: [...identity.problems, ...uncounted],
        },
      };
    }
    if (undecided.length > 0) {
      return {
        status: "inconclusive",
        message: `${undecided.length} change(s) to objects that have volatile fields could not be judged: which fields the writes changed could not be read`,
        evidence: { writes: sorted.unknown.map(writeEvidence), notes: uncounted },
      };
    }
    if (maybeTicks.some(isEffective)) {
      return maybeTicksVerdict(maybeTicks.filter(isEffective), uncounted);
    }
    if (crMoved) {
      return {
        status: "inconclusive",
        message: crMoved,
        evidence: {
          notes: [
            "a writer the proxy did not see changed the custom resource: does the operator write through another client?",
          ],
        },
      };
    }
    return {
      status: "passed",
      message: `no operator write changed anything${allowed.length > 0 ? " the contract promises to keep" : ""} (${after.length} request(s), ${ambiguous.length} ambiguous${allowed.length > 0 ? `, ${sorted.excused.length} allowed by its promises` : ""})`,
      ...(ambiguous.length > 0 || allowed.length > 0
        ? {
            evidence: {
              writes: [...ambiguous, ...sorted.excused.map((e) => e.entry)].map(writeEvidence),
              notes: uncounted,
            },
          }
        : {}),
    };
  },
});

/**
 * Children recreated (UID changed), gone, new, or whose generation moved
 * since the reference; what the contract's promises allow is `excused`, each
 * with why (a generation moved only by writes to volatile fields included).
 * Pure.
 */
export function identityChanges(
  observation: Pick<SettledObservation, "reference" | "after" | "liveChildren" | "referenceChildrenNow">,
  kinds: ObjectKinds,
  maybeTicks: readonly WriteEntry[] = [],
): { problems: string[]; excused: string[]; undecided: string[] } {
  const { reference, after } = observation;
  const problems: string[] = [];
  const excused: string[] = [];
  const undecided: string[] = [];
  const report = (problem: string, why: string | undefined) => {
    if (why) excused.push(`not counted: ${problem}: ${why}`);
    else problems.push(problem);
  };
  const asWritten = (c: ChildRecord) => ({ group: c.group, resource: c.resource, name: c.ref.name });
  const now = new Map(observation.liveChildren.map((c) => [`${c.group}/${c.resource}/${c.ref.name}`, c]));
  reference.children.forEach((child, index) => {
    const live = observation.referenceChildrenNow[index];
    const name = describeRef(child.ref);
    const uidWithdrawn = kinds.withdrawn(asWritten(child), "uid");
    if (!live || live.gone) {
      // What a schedule made it may prune (a history limit).
      const clock =
        child.madeByClock && `made by the operator's clock (${describeClockWrite(child.madeByClock)})`;
      report(`${name} is gone`, clock ?? uidWithdrawn);
    } else if (live.uid !== child.uid) {
      report(`${name} was recreated (uid ${child.uid} -> ${live.uid ?? "?"})`, uidWithdrawn);
    } else if (child.generation !== undefined && live.generation !== child.generation) {
      const changes = after.filter(
        (e) =>
          e.effect === "changed" &&
          e.group === child.group &&
          e.resource === child.resource &&
          e.name === child.ref.name,
      );
      const moved = `${name}: metadata.generation moved ${child.generation} -> ${live.generation ?? "?"}`;
      const withdrawn = kinds.withdrawn(asWritten(child), "generation");
      // Moved only by changes of volatile fields (a hash annotation on a Deployment moves it): allowed.
      const unread = changes.filter((e) => volatileOnly(kinds.promisesOf(e), e.changedPaths) === "unknown");
      const volatileOnlyMoves =
        changes.length > 0 && changes.every((e) => changedOnlyVolatile(e, kinds))
          ? `moved only by writes of volatile fields (${changes.map((e) => `#${e.seq}`).join(", ")})`
          : undefined;
      const couldBeVolatile =
        unread.length > 0 && changes.every((e) => unread.includes(e) || changedOnlyVolatile(e, kinds));
      if (!withdrawn && !volatileOnlyMoves && couldBeVolatile) {
        undecided.push(
          `not judged: ${moved}: the fields its writes changed could not be read (${unread.map((e) => `#${e.seq}`).join(", ")})`,
        );
      } else {
        report(moved, withdrawn ?? volatileOnlyMoves);
      }
    }
    now.delete(`${child.group}/${child.resource}/${child.ref.name}`);
  });
  // What maybeTicksApart set apart is its own verdict's (maybeTicksVerdict), not counted here.
  const maybeTick = (c: ChildRecord) =>
    maybeTicks.some(
      (w) =>
        w.effect === "created" && w.group === c.group && w.resource === c.resource && w.name === c.ref.name,
    );
  for (const extra of now.values()) {
    if (maybeTick(extra)) continue;
    const clock =
      extra.madeByClock && `made by the operator's clock (${describeClockWrite(extra.madeByClock)})`;
    report(`${describeRef(extra.ref)} is new`, clock ?? kinds.withdrawn(asWritten(extra), "uid"));
  }
  return { problems, excused, undecided };
}

/** Why the custom resource's resourceVersion is not the one the kit's touch left, when no operator write explains it. Pure. */
export function customResourceMovedByOthers(
  settled: KubeObject,
  touch: WriteEntry | undefined,
  after: readonly WriteEntry[],
): string | undefined {
  const now = settled.metadata?.resourceVersion;
  if (!touch?.resourceVersion || now === touch.resourceVersion) return undefined;
  const explained = after.some(
    (e) => e.seq > touch.seq && e.name === settled.metadata?.name && e.effect !== "no-op",
  );
  return explained
    ? undefined
    : `the custom resource's resourceVersion moved from ${touch.resourceVersion} (the kit's touch) to ${now ?? "?"} with no operator write through the proxy`;
}

/**
 * Whether the operator's writes after the baseline may hold a tick of its
 * clock that fell due inside the restart's or the touches' reconciles: no
 * clock horizon, and its queues showed a delayed requeue pending at the
 * baseline (maybeTicksApart).
 */
export function clockSuspected(
  observation: Pick<SettledObservation, "clockPendingAtBaseline">,
  contract: Pick<Contract, "clock">,
): boolean {
  return contract.clock.horizonMs === undefined && observation.clockPendingAtBaseline === true;
}

/** The verdict when nothing but writes named as a tick would have counted: neither a failure nor a pass. */
export function maybeTicksVerdict(writes: readonly WriteEntry[], notes: readonly string[]): Judgement {
  return {
    status: "inconclusive",
    message: `${writes.length} operator write(s) of objects named as a schedule's ticks are (${[...new Set(writes.map((w) => `${w.resource}/${w.name ?? ""}`))].join(", ")}), while its last reconcile before the restart had asked for a delayed requeue: a tick that fell due inside the restart's or the touches' reconciles cannot be told from an answer without a clock horizon (clock.horizon)`,
    evidence: { writes: writes.map(writeEvidence), notes: [...notes] },
  };
}
