import { randomBytes } from "node:crypto";
import { describeError } from "../errors.js";
import type { KubeObject, ObjectRef } from "../kube/kube-client.js";
import type { Status } from "../report/report-model.js";
import { describeVolatile, promisesFor, volatileOnly } from "../contract/promises.js";
import { formatObjectPath } from "../util/object-paths.js";
import {
  describeRef,
  liveChildren,
  type ChildRecord,
  recordReference,
  writeEvidence,
  type ReferenceState,
} from "../runner/reference-state.js";
import { Inconclusive, NeverQuiet, Scenario } from "../runner/scenario.js";
import type { WriteEntry } from "../proxy/write-log.js";
import { pollUntil, PollTimeoutError } from "../util/poll.js";
import {
  inconclusiveFor,
  otherShards,
  type CheckDefinition,
  type ScenarioResult,
  type Suite,
  type SuiteContext,
} from "./check.js";
import { changedOnlyVolatile, ObjectKinds, sortByPromises, writeLabel } from "./promised.js";
import { runawayCreation } from "./runaway-creation.js";

/** The label the kit touches objects with: metadata only, so it changes nothing an operator manages. */
export const TOUCH_LABEL = "reconcile-conformance.dev/touch";

const noAvoidableWrites: CheckDefinition = {
  id: "status-stability/no-avoidable-writes",
  level: "MUST",
  summary: "after convergence, a restart and foreign touches cause no write that changes anything",
};
const noRedundantWrites: CheckDefinition = {
  id: "status-stability/no-redundant-writes",
  level: "SHOULD",
  summary: "over the same stimuli, no write request at all, not even one the server finds a no-op",
};
const lastTransitionTime: CheckDefinition = {
  id: "status-stability/last-transition-time",
  level: "MUST",
  summary: "conditions whose status did not change keep their lastTransitionTime",
};
const observedGeneration: CheckDefinition = {
  id: "status-stability/observed-generation",
  level: "MUST",
  summary: "observedGeneration catches up after a spec change and stays put for metadata-only changes",
};

const CHECKS = [noAvoidableWrites, noRedundantWrites, lastTransitionTime, observedGeneration];

/**
 * One scenario, four verdicts. After the sample converged: restart the
 * operator (a full resync of everything it watches), then touch each child
 * and the custom resource with a foreign label. A label is metadata only for
 * every kind (an annotation is not: a Deployment's annotations count as
 * spec and bump its generation, which legitimately moves a correct
 * operator's readiness). A correct operator writes nothing that changes
 * anything through all of it.
 */
export const statusStability: Suite = {
  name: "status-stability",
  checks: CHECKS,
  async run(context: SuiteContext, selected): Promise<ScenarioResult[]> {
    if (!CHECKS.some((c) => selected.has(c.id))) return [];
    const started = context.clock.now();
    const elapsed = () => context.clock.now() - started;
    const target = "restart and foreign touches";
    // One scenario judges all four: it is assigned to a shard under the first check's id.
    const elsewhere = otherShards(
      context,
      noAvoidableWrites.id,
      target,
      CHECKS.filter((c) => selected.has(c.id)).map((c) => c.id),
    );
    if (elsewhere) return elsewhere;
    let scenario: Scenario | undefined;
    try {
      scenario = await Scenario.open("status-stability", context.deps);
      context.progress(`namespace ${scenario.namespace}: starting the operator, creating the sample`);
      await scenario.startWithSample();
      const reference = await recordReference(scenario, await scenario.converge("convergence of the sample"));

      context.progress("restarting the operator");
      await scenario.restartOperator();
      await scenario.converge("convergence after the restart");

      context.progress(
        `touching ${reference.children.length} child(ren) and the custom resource with a foreign label`,
      );
      const touchOf = await touchAll(scenario, reference);
      const settled = await scenario.converge("convergence after the touches");
      const after = scenario.operatorWrites({ after: reference.markSeq });
      const results: ScenarioResult[] = [];
      const push = (
        check: CheckDefinition,
        status: Status,
        message: string,
        evidence?: ScenarioResult["evidence"],
      ) => {
        if (selected.has(check.id))
          results.push({
            check: check.id,
            target,
            status,
            message,
            durationMs: elapsed(),
            ...(evidence ? { evidence } : {}),
          });
      };

      // no-avoidable-writes: what the contract's promises allow (a recreated-by-design child, a
      // heartbeat in a volatile field) is not counted, and each such write is named in the evidence.
      const kinds = new ObjectKinds(context.deps.contract, reference.children);
      const sorted = sortByPromises(
        after.filter((e) => e.effect === "created" || e.effect === "changed" || e.effect === "deleted"),
        kinds,
      );
      const avoidable = sorted.counted;
      const ambiguous = after.filter((e) => e.effect === "ambiguous");
      const identity = await identityChanges(scenario, reference, kinds, after);
      const allowed = [...sorted.excused.map((e) => `not counted: ${e.why}`), ...identity.excused];
      const undecided = [...sorted.unknown.map(unreadChanges), ...identity.undecided];
      const crMoved = customResourceMovedByOthers(settled, touchOf.customResource, after);
      const uncounted = [
        ...allowed,
        ...undecided,
        ...ambiguous.map((e) => `ambiguous (not counted): #${e.seq} ${e.effectWhy ?? ""}`),
      ];
      if (avoidable.length > 0 || identity.problems.length > 0) {
        push(
          noAvoidableWrites,
          "failed",
          `${avoidable.length} operator write(s) changed stored state${identity.problems.length > 0 ? `; ${identity.problems.join("; ")}` : ""}`,
          {
            writes: avoidable.map(writeEvidence),
            notes: [...identity.problems, ...uncounted],
          },
        );
      } else if (undecided.length > 0) {
        push(
          noAvoidableWrites,
          "inconclusive",
          `${undecided.length} change(s) to objects that have volatile fields could not be judged: which fields the writes changed could not be read`,
          { writes: sorted.unknown.map(writeEvidence), notes: uncounted },
        );
      } else if (crMoved) {
        push(noAvoidableWrites, "inconclusive", crMoved, {
          notes: [
            "a writer the proxy did not see changed the custom resource: does the operator write through another client?",
          ],
        });
      } else {
        push(
          noAvoidableWrites,
          "passed",
          `no operator write changed anything${allowed.length > 0 ? " the contract promises to keep" : ""} (${after.length} request(s), ${ambiguous.length} ambiguous${allowed.length > 0 ? `, ${sorted.excused.length} allowed by its promises` : ""})`,
          ambiguous.length > 0 || allowed.length > 0
            ? {
                writes: [...ambiguous, ...sorted.excused.map((e) => e.entry)].map(writeEvidence),
                notes: uncounted,
              }
            : undefined,
        );
      }

      // no-redundant-writes
      if (after.length > 0) {
        push(
          noRedundantWrites,
          "failed",
          `${after.length} operator write request(s) where none was needed (the server found ${after.filter((e) => e.effect === "no-op").length} of them no-ops)`,
          {
            writes: after.map(writeEvidence),
          },
        );
      } else {
        push(noRedundantWrites, "passed", "no write request at all");
      }

      // last-transition-time
      const before = conditionsOf(reference.customResource.status);
      if (before.length === 0) {
        push(lastTransitionTime, "skipped", "the custom resource reports no conditions");
      } else {
        // A condition's lastTransitionTime the contract declares volatile may move; a write that
        // changed only volatile fields (a heartbeat) is no transition and needs no reading.
        const crPromises = promisesFor(
          context.deps.contract.promises,
          context.deps.contract.customResource.kind,
          scenario.customResource.name,
        );
        const allMoved = movedTransitionTimes(before, conditionsOf(settled.status));
        const volatileTimes = allMoved.flatMap((m) => {
          const path = formatObjectPath([
            { field: "status" },
            { field: "conditions" },
            { key: "type", value: m.type },
            { field: "lastTransitionTime" },
          ]);
          const only = volatileOnly(crPromises, [path]);
          return only !== "unknown" && only.only ? [{ moved: m, fields: only.fields }] : [];
        });
        const moved = allMoved.filter((m) => !volatileTimes.some((v) => v.moved === m));
        const statusWrites = after.filter(
          (e) =>
            e.resource === context.deps.contract.customResource.resource &&
            e.verb !== "delete" &&
            !changedOnlyVolatile(e, kinds),
        );
        const volatileNotes = volatileTimes.map(
          (v) =>
            `not counted: condition ${v.moved.type} got a new lastTransitionTime in a volatile field: ${describeVolatile(v.fields)}`,
        );
        // A condition that really went False and back was rightly given new times: the operator's own
        // status writes (their bodies are JSON for custom resources) show the way it went.
        const transitioned = moved.filter((m) =>
          statusWrites.some((e) => conditionStatusIn(e.body, m.type, m.status) === "different"),
        );
        const unexplained = moved.filter((m) => !transitioned.includes(m));
        const unreadable =
          unexplained.length > 0 && statusWrites.some((e) => e.effect !== "no-op" && e.body === undefined);
        if (unexplained.length > 0 && unreadable) {
          push(
            lastTransitionTime,
            "inconclusive",
            "a condition got a new lastTransitionTime and some of the operator's status writes could not be read to tell whether it transitioned",
            {
              writes: statusWrites.map(writeEvidence),
            },
          );
        } else if (unexplained.length > 0) {
          push(
            lastTransitionTime,
            "failed",
            `${unexplained.length} condition(s) kept their status but got a new lastTransitionTime`,
            {
              diffs: unexplained.map((m) => ({
                object: "custom resource",
                path: `status.conditions[type=${m.type}].lastTransitionTime`,
                expected: m.expected,
                actual: m.actual,
              })),
              writes: statusWrites.map(writeEvidence),
              ...(volatileNotes.length > 0 ? { notes: volatileNotes } : {}),
            },
          );
        } else {
          push(
            lastTransitionTime,
            "passed",
            `${before.length - volatileTimes.length} condition(s) kept their lastTransitionTime${volatileTimes.length > 0 ? ` (${volatileTimes.length} volatile by the contract)` : ""}`,
            volatileNotes.length > 0 ? { notes: volatileNotes } : undefined,
          );
        }
      }

      // observed-generation (judged last: it changes the spec)
      if (selected.has(observedGeneration.id)) {
        results.push(await judgeObservedGeneration(scenario, context, reference, settled, target, elapsed));
      }
      return results;
    } catch (error) {
      if (error instanceof NeverQuiet) {
        // The children there are by now tell the kinds the writes are about (for their promises).
        const children = scenario ? await liveChildren(scenario).catch(() => []) : [];
        return neverQuiet(
          error,
          new ObjectKinds(context.deps.contract, children),
          selected,
          target,
          elapsed(),
        );
      }
      if (error instanceof Inconclusive)
        return inconclusiveFor(CHECKS, selected, target, error.message, elapsed(), error.notes);
      if (context.deps.signal.aborted) throw error;
      return inconclusiveFor(
        CHECKS,
        selected,
        target,
        `the scenario could not run: ${describeError(error)}`,
        elapsed(),
        scenario ? await scenario.operatorLogNotes() : [],
      );
    } finally {
      await scenario?.close();
    }
  },
};

/**
 * The operator was ready but never fell quiet: its writes while ready are
 * judged as the write checks would judge them after convergence; the other
 * checks cannot be judged.
 */
function neverQuiet(
  error: NeverQuiet,
  kinds: ObjectKinds,
  selected: ReadonlySet<string>,
  target: string,
  durationMs: number,
): ScenarioResult[] {
  const writes = error.writes;
  const state = error.ready
    ? "the custom resource was ready but the operator never fell quiet"
    : "the operator never fell quiet (and the custom resource never became ready)";
  // What the contract allows (a heartbeat in a volatile field of the custom resource) is not counted.
  const sorted = sortByPromises(
    writes.filter((e) => e.effect === "created" || e.effect === "changed" || e.effect === "deleted"),
    kinds,
  );
  const effective = sorted.counted;
  const shown = (entries: readonly WriteEntry[]) => entries.slice(-20).map(writeEvidence);
  const notes = [
    `${writes.length} operator write(s) in the wait; the last ${Math.min(20, writes.length)} shown`,
    ...(sorted.excused.length > 0
      ? [
          `${sorted.excused.length} of them allowed by the contract's promises, e.g. ${sorted.excused[0]?.why ?? ""}`,
        ]
      : []),
    ...sorted.unknown.map(unreadChanges),
    ...error.notes,
  ];
  // Ready and still changing things: avoidable. Not ready: an operator still making progress
  // (replicas coming up) writes too, so only runaway creation, the same kind created again and
  // again, is a verdict; anything else stays inconclusive.
  const runaway = runawayCreation(effective, (e) => e.resource);
  const judged = error.ready ? effective.length > 0 : runaway !== undefined;
  const results: ScenarioResult[] = [];
  if (selected.has(noAvoidableWrites.id)) {
    results.push(
      judged
        ? {
            check: noAvoidableWrites.id,
            target,
            status: "failed",
            message: `${state}: ${effective.length} write(s) changed stored state${runaway ? `, ${runaway[1]} of them creates of ${runaway[0]}` : ""} (${error.message})`,
            durationMs,
            evidence: { writes: shown(effective), notes },
          }
        : {
            check: noAvoidableWrites.id,
            target,
            status: "inconclusive",
            message: error.message,
            durationMs,
            evidence: { writes: shown(writes), notes },
          },
    );
  }
  if (selected.has(noRedundantWrites.id) && (judged || error.ready)) {
    results.push({
      check: noRedundantWrites.id,
      target,
      status: "failed",
      message: `${state}: ${writes.length} write request(s)`,
      durationMs,
      evidence: { writes: shown(writes), notes },
    });
  }
  results.push(
    ...inconclusiveFor(
      [...(judged || error.ready ? [] : [noRedundantWrites]), lastTransitionTime, observedGeneration],
      selected,
      target,
      error.message,
      durationMs,
      error.notes,
    ),
  );
  return results;
}

/**
 * Sets the kit's foreign label on one object (a merge patch through the
 * kit's writer: a change of metadata only, and a watch event). A refusal
 * leaves nothing to judge: Inconclusive.
 */
export async function touch(scenario: Scenario, ref: ObjectRef, value: string): Promise<void> {
  try {
    await scenario.kit.patch(
      {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        metadata: { name: ref.name, namespace: ref.namespace, labels: { [TOUCH_LABEL]: value } },
      },
      { type: "merge" },
    );
  } catch (error) {
    throw new Inconclusive(
      `the API server refused the kit's touch of ${describeRef(ref)}: ${describeError(error)}`,
    );
  }
}

/** Touches every child and the custom resource with a foreign label; the kit's entries, by object. */
async function touchAll(
  scenario: Scenario,
  reference: ReferenceState,
): Promise<{ customResource: WriteEntry | undefined }> {
  const value = randomBytes(4).toString("hex");
  const targets = [...reference.children.map((c) => c.ref), scenario.customResource];
  for (const ref of targets) await touch(scenario, ref, value);
  const cr = scenario.customResource;
  const { group, resource } = scenario.contract.customResource;
  const customResource = scenario.proxy.writeLog
    .query({ actor: "kit", verb: "patch", group, resource, namespace: cr.namespace, name: cr.name })
    .at(-1);
  return { customResource };
}

/**
 * Children recreated (UID changed), gone, new, or whose generation moved
 * since the reference; what the contract's promises allow is `excused`, each
 * with why (a generation moved only by writes to volatile fields included).
 */
async function identityChanges(
  scenario: Scenario,
  reference: ReferenceState,
  kinds: ObjectKinds,
  after: readonly WriteEntry[],
): Promise<{ problems: string[]; excused: string[]; undecided: string[] }> {
  const problems: string[] = [];
  const excused: string[] = [];
  const undecided: string[] = [];
  const report = (problem: string, why: string | undefined) => {
    if (why) excused.push(`not counted: ${problem}: ${why}`);
    else problems.push(problem);
  };
  const asWritten = (c: ChildRecord) => ({ group: c.group, resource: c.resource, name: c.ref.name });
  const now = new Map(
    (await liveChildren(scenario)).map((c) => [`${c.group}/${c.resource}/${c.ref.name}`, c]),
  );
  for (const child of reference.children) {
    const live = await scenario.kit.tryGet(child.ref);
    const name = describeRef(child.ref);
    const uidWithdrawn = kinds.withdrawn(asWritten(child), "uid");
    if (!live) {
      report(`${name} is gone`, uidWithdrawn);
    } else if (live.metadata?.uid !== child.uid) {
      report(`${name} was recreated (uid ${child.uid} -> ${live.metadata?.uid ?? "?"})`, uidWithdrawn);
    } else if (child.generation !== undefined && live.metadata?.generation !== child.generation) {
      const changes = after.filter(
        (e) =>
          e.effect === "changed" &&
          e.group === child.group &&
          e.resource === child.resource &&
          e.name === child.ref.name,
      );
      const moved = `${name}: metadata.generation moved ${child.generation} -> ${live.metadata?.generation ?? "?"}`;
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
  }
  for (const extra of now.values()) {
    report(`${describeRef(extra.ref)} is new`, kinds.withdrawn(asWritten(extra), "uid"));
  }
  return { problems, excused, undecided };
}

/** The note for a changed write whose changed fields are unknown on an object with volatile fields. */
function unreadChanges(entry: WriteEntry): string {
  return `not judged: ${writeLabel(entry)}: its object has volatile fields and the fields it changed could not be read`;
}

/** Why the custom resource's resourceVersion is not the one the kit's touch left, when no operator write explains it. */
function customResourceMovedByOthers(
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

interface Condition {
  readonly type: string;
  readonly status?: string;
  readonly lastTransitionTime?: string;
}

function conditionsOf(status: unknown): Condition[] {
  const conditions = (status as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(conditions)
    ? (conditions as Condition[]).filter((c) => typeof c.type === "string")
    : [];
}

function movedTransitionTimes(before: readonly Condition[], after: readonly Condition[]) {
  return before.flatMap((b) => {
    const a = after.find((c) => c.type === b.type);
    if (!a || a.status !== b.status || a.lastTransitionTime === b.lastTransitionTime) return [];
    return [{ type: b.type, status: b.status, expected: b.lastTransitionTime, actual: a.lastTransitionTime }];
  });
}

/** Whether a status write's body set condition `type` to a status other than `status`. */
function conditionStatusIn(
  body: unknown,
  type: string,
  status: string | undefined,
): "same" | "different" | "absent" {
  const condition = conditionsOf((body as { status?: unknown } | undefined)?.status).find(
    (c) => c.type === type,
  );
  if (!condition) return "absent";
  return condition.status === status ? "same" : "different";
}

/** status.observedGeneration, or the Ready/Available condition's. */
function observedGenerationOf(object: { readonly status?: unknown } | KubeObject): number | undefined {
  const status = (object as { status?: unknown }).status as
    { observedGeneration?: unknown; conditions?: unknown } | undefined;
  if (typeof status?.observedGeneration === "number") return status.observedGeneration;
  const condition = conditionsOf(status).find((c) => c.type === "Ready" || c.type === "Available") as
    { observedGeneration?: unknown } | undefined;
  return typeof condition?.observedGeneration === "number" ? condition.observedGeneration : undefined;
}

async function judgeObservedGeneration(
  scenario: Scenario,
  context: SuiteContext,
  reference: ReferenceState,
  settled: KubeObject,
  target: string,
  elapsed: () => number,
): Promise<ScenarioResult> {
  const check = observedGeneration.id;
  const result = (
    status: Status,
    message: string,
    evidence?: ScenarioResult["evidence"],
  ): ScenarioResult => ({
    check,
    target,
    status,
    message,
    durationMs: elapsed(),
    ...(evidence ? { evidence } : {}),
  });
  if (observedGenerationOf({ status: reference.customResource.status }) === undefined) {
    return result("skipped", "the custom resource reports no observedGeneration");
  }
  const generation = settled.metadata?.generation;
  const observed = observedGenerationOf(settled);
  if (observed !== generation) {
    return result(
      "failed",
      `after metadata-only changes observedGeneration is ${observed ?? "?"}, generation ${generation ?? "?"}`,
    );
  }
  const update = context.deps.contract.updates[0];
  if (!update)
    return result(
      "passed",
      `observedGeneration stayed at generation ${generation ?? "?"} through metadata-only changes (no spec update in the contract to follow)`,
    );
  const cr = scenario.customResource;
  context.progress("applying the contract's first spec update");
  const mark = scenario.proxy.writeLog.lastSeq;
  try {
    await scenario.applyUpdate(update, 1);
  } catch (error) {
    if (!(error instanceof Inconclusive)) throw error;
    return result("inconclusive", error.message);
  }
  try {
    const caughtUp = await pollUntil(
      async () => {
        const now = await context.deps.kube.get(cr);
        const seen = observedGenerationOf(now);
        return seen === now.metadata?.generation &&
          scenario.proxy.operatorIdleMs >= context.deps.contract.quietPeriodMs
          ? { done: true, value: now }
          : {
              done: false,
              reason: `observedGeneration ${seen ?? "?"}, generation ${now.metadata?.generation ?? "?"}`,
            };
      },
      {
        description: "observedGeneration to catch up",
        timeoutMs: context.deps.contract.timeouts.convergeMs,
        intervalMs: 100,
        signal: context.deps.signal,
      },
    );
    return result(
      "passed",
      `observedGeneration caught up with the spec update (generation ${caughtUp.metadata?.generation ?? "?"}) and stayed put for metadata-only changes`,
    );
  } catch (error) {
    if (!(error instanceof PollTimeoutError)) throw error;
    return result("failed", `observedGeneration did not catch up with the spec update: ${error.lastReason}`, {
      writes: scenario.operatorWrites({ after: mark }).map(writeEvidence),
      operatorLog: await scenario.operator.logTail(15),
    });
  }
}
