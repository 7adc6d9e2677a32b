import { randomBytes } from "node:crypto";
import { historicalFailures, type HistoricalReadProof } from "../proxy/historical-reads.js";
import type { WatchFaultProof } from "../proxy/watch-faults.js";
import type { WriteEntry } from "../proxy/write-log.js";
import { describeRef, writeEvidence } from "../runner/reference-state.js";
import { Inconclusive, type Scenario } from "../runner/scenario.js";
import type { SpecReference } from "../runner/spec-references.js";
import { pollUntil, PollTimeoutError } from "../util/poll.js";
import {
  inScenario,
  skippedResult,
  verdictFor,
  withReference,
  type CheckDefinition,
  type ScenarioResult,
  type Suite,
  type SuiteContext,
} from "./check.js";
import {
  compareWithReference,
  describeMismatch,
  endStateMatches,
  identityLosses,
  type EndStateComparison,
} from "./end-state.js";
import { ObjectKinds } from "./promised.js";
import { untilNothingLeft } from "./fault-wait.js";
import { crashAtLine, crashLines, type CrashLine } from "./idempotency.js";
import { touch } from "./status-stability.js";

const ownCreateUnseen: CheckDefinition = {
  id: "staleness/own-create-unseen",
  level: "MUST",
  summary:
    "while the events of a kind of child it creates are kept from its watch, further reconciles duplicate nothing and delete nothing, and it ends as the reference",
};
const missedIntermediateState: CheckDefinition = {
  id: "staleness/missed-intermediate-state",
  level: "MUST",
  summary:
    "when its watch delivers only the custom resource's last state after several spec updates, it converges to the reference of the final spec",
};
const restartFromThePast: CheckDefinition = {
  id: "staleness/restart-from-the-past",
  level: "MUST",
  summary:
    "restarted after a crash with its caches listed from the state before its last create, it deletes and recreates nothing and ends as the reference",
};

const CHECKS = [ownCreateUnseen, missedIntermediateState, restartFromThePast];

/** Reconciles the kit asks for (label touches of the custom resource) while a child's events are held. */
const TOUCHES = 3;
/** How long the kit gives the operator to act on one touch before the next. */
const TOUCH_REACTION_MS = 1_500;
/** How long a restarted operator on a past view may take to make its first write before its view catches up anyway. */
const FIRST_ACT_MS = 5_000;

/**
 * Stale views (DESIGN.md section 3): the operator's caches lag the API
 * server, miss intermediate states, or start from the past, through the
 * proxy's watch seam and the API server's own history, on an unmodified
 * operator. Every scenario's faults prove in the evidence that they acted;
 * one that did not (nothing held, nothing coalesced, a past the API server
 * no longer had) makes the scenario inconclusive, never a pass.
 */
export const staleness: Suite = {
  name: "staleness",
  checks: CHECKS,
  referencesNeeded: (selected, updates) => [
    ...(selected.has(ownCreateUnseen.id) || selected.has(restartFromThePast.id) ? [0] : []),
    ...(selected.has(missedIntermediateState.id) && updates >= 1 ? [updates] : []),
  ],
  async run(context: SuiteContext, selected): Promise<ScenarioResult[]> {
    const results: ScenarioResult[] = [];
    // Every scenario of the suite is independent of the others: one list, side by side.
    const tasks: (() => Promise<ScenarioResult>)[] = [];
    if (selected.has(ownCreateUnseen.id) || selected.has(restartFromThePast.id)) {
      const checks = [ownCreateUnseen, restartFromThePast];
      results.push(
        ...(await withReference(context, 0, checks, selected, (reference) => {
          const skipped: ScenarioResult[] = [];
          if (selected.has(ownCreateUnseen.id)) {
            const kinds = childKinds(reference);
            if (kinds.length === 0) {
              const why = "the operator created no child on its way to the reference";
              skipped.push(skippedResult(ownCreateUnseen.id, "children", why));
            }
            for (const kind of kinds) {
              tasks.push(() => {
                context.progress(`holding ${kind.resource} events from the operator's watch`);
                return unseenOne(context, kind, reference);
              });
            }
          }
          if (selected.has(restartFromThePast.id)) {
            const creates = crashLines(reference, context.deps.contract.ignoreWrites).filter(
              (l) => l.write.verb === "create",
            );
            if (creates.length === 0) {
              const why =
                "the operator created nothing on its way to the reference: no past lacks what it made";
              skipped.push(skippedResult(restartFromThePast.id, "write sequence", why));
            }
            for (const line of creates) {
              tasks.push(() => {
                context.progress(`restart from the past before write ${line.id}`);
                return pastOne(context, line, reference);
              });
            }
          }
          return Promise.resolve(skipped);
        })),
      );
    }
    if (selected.has(missedIntermediateState.id)) {
      const updates = context.deps.contract.updates;
      if (updates.length === 0) {
        const why = "the contract has no updates: there is no intermediate state to miss";
        results.push(skippedResult(missedIntermediateState.id, "updates", why));
      } else {
        const checks = [missedIntermediateState];
        results.push(
          ...(await withReference(context, updates.length, checks, selected, (reference) => {
            tasks.push(() => coalescedOne(context, reference));
            return Promise.resolve([]);
          })),
        );
      }
    }
    results.push(...(await context.sideBySide(tasks, (task) => task())));
    return results;
  },
};

interface ChildKind {
  readonly group: string;
  readonly resource: string;
  /** The reference's children of this kind, by name. */
  readonly names: readonly string[];
}

/** The kinds of the reference's children, in the order the operator first created one. */
function childKinds(reference: SpecReference): ChildKind[] {
  const kinds = new Map<string, ChildKind>();
  for (const child of reference.children) {
    const key = `${child.resource}.${child.group}`;
    const known = kinds.get(key);
    kinds.set(key, {
      group: child.group,
      resource: child.resource,
      names: [...(known?.names ?? []), child.ref.name],
    });
  }
  return [...kinds.values()];
}

/**
 * staleness/own-create-unseen for one kind of child: every event of that
 * kind in the scenario's namespace is held from the operator's watches from
 * the start, so the operator never sees its own creates of that kind; the
 * kit touches the custom resource (a foreign label: a reconcile each) and
 * gives it time to act on its stale cache; then everything held is
 * delivered, in order, and it must converge to the reference with the
 * children it first made.
 */
async function unseenOne(
  context: SuiteContext,
  kind: ChildKind,
  reference: SpecReference,
): Promise<ScenarioResult> {
  const result = verdictFor(ownCreateUnseen, kind.resource, context.clock);
  return inScenario(context, `unseen-${kind.resource}`, result, async (scenario) => {
    const hold = scenario.proxy.armWatch({
      mode: "hold",
      group: kind.group,
      resource: kind.resource,
      match: { namespace: scenario.namespace },
    });
    let released: WatchFaultProof | undefined;
    try {
      await scenario.startWithSample();
      const ofKind = (e: WriteEntry) =>
        e.group === kind.group && e.resource === kind.resource && !e.subresource;
      await untilNothingLeft(
        context,
        scenario,
        `create of a ${kind.resource} child with its events held`,
        () =>
          Promise.resolve([
            ...(scenario.operatorWrites({ effect: "created" }).some(ofKind)
              ? []
              : [`a ${kind.resource} create`]),
            ...(hold.held().length > 0 ? [] : ["a held event"]),
          ]),
      );
      const firstCreated = scenario.operatorWrites({ effect: "created" }).filter(ofKind);
      const touches = await touchCustomResource(context, scenario);
      released = hold.release();
      const proof = holdProof(released, kind.resource, touches);

      context.progress(
        `released ${released.taken.length} held ${kind.resource} event(s); waiting for convergence`,
      );
      await scenario.converge("convergence after the release");
      const comparison = await compareWithReference(scenario, reference, context.deps.contract);
      const { problems, excused } = losses(scenario, reference, firstCreated, comparison);
      const evidence = {
        writes: scenario.operatorWrites({ after: (firstCreated[0]?.seq ?? 1) - 1 }).map(writeEvidence),
        ...(comparison.diffs.length > 0 ? { diffs: comparison.diffs } : {}),
        notes: [...proof, ...problems, ...excused],
      };
      if (problems.length > 0) {
        return result(
          "failed",
          `while its own ${kind.resource} were unseen and ${touches} reconcile(s) were asked for: ${problems.join("; ")}`,
          { ...evidence, operatorLog: await scenario.operator.logTail(10) },
        );
      }
      return result(
        "passed",
        `with its ${kind.resource} events held (${released.taken.length} event(s)) through ${touches} touch(es) of the custom resource, it duplicated nothing, deleted nothing${allowedByPromises(excused)} and converged to the reference`,
        evidence,
      );
    } finally {
      if (!released) hold.release();
    }
  });
}

/**
 * staleness/missed-intermediate-state: after the sample converged, the
 * custom resource's events are coalesced while the contract's updates are
 * applied one after another, so the operator's informer goes from the first
 * spec to the last in one event, as one that missed the ones between would.
 * Level-triggered reconciliation reaches the reference of the final spec.
 */
async function coalescedOne(context: SuiteContext, reference: SpecReference): Promise<ScenarioResult> {
  const { updates, customResource } = context.deps.contract;
  const target = `updates 1-${updates.length}`;
  const result = verdictFor(missedIntermediateState, target, context.clock);
  return inScenario(context, "missed-intermediate", result, async (scenario) => {
    await scenario.startWithSample();
    await scenario.converge();
    const cr = scenario.customResource;
    const coalesce = scenario.proxy.armWatch({
      mode: "coalesce",
      group: customResource.group,
      resource: customResource.resource,
      match: { namespace: cr.namespace, name: cr.name },
    });
    let released: WatchFaultProof | undefined;
    try {
      let last: string | undefined;
      for (const [index, update] of updates.entries()) {
        last = (await scenario.applyUpdate(update, index + 1)).metadata?.resourceVersion;
      }
      // Every update's event must have reached the fault before it is released, or some pass it.
      await untilNothingLeft(context, scenario, "arrival of the last update at the coalescing fault", () =>
        Promise.resolve(
          coalesce.held().some((e) => e.resourceVersion === last)
            ? []
            : [`the event of resourceVersion ${last}`],
        ),
      );
      released = coalesce.release();
      const proof = [
        `coalesced the custom resource's events on ${released.streams} watch stream(s): took ${released.taken.length} (${heldList(released.taken)}), delivered ${released.delivered.length} (${heldList(released.delivered)})`,
      ];
      if (released.taken.length < 2 || released.delivered.length >= released.taken.length) {
        throw new Inconclusive(
          "the coalescing fault took too few events to hide an intermediate state",
          proof,
        );
      }
      await scenario.converge(`convergence to update ${updates.length}`);
      const comparison = await compareWithReference(scenario, reference, context.deps.contract);
      const evidence = {
        writes: scenario.operatorWrites({ after: scenario.specWrites[1]?.seq ?? 0 }).map(writeEvidence),
        ...(comparison.diffs.length > 0 ? { diffs: comparison.diffs } : {}),
        notes: proof,
      };
      if (!endStateMatches(comparison)) {
        return result(
          "failed",
          `after seeing only the last of ${updates.length} spec updates, it ended unlike the reference of update ${updates.length}: ${describeMismatch(comparison)}`,
          { ...evidence, operatorLog: await scenario.operator.logTail(10) },
        );
      }
      return result(
        "passed",
        `seeing only the last of ${updates.length} spec updates, it converged to the reference of update ${updates.length}`,
        evidence,
      );
    } finally {
      if (!released) coalesce.release();
    }
  });
}

/**
 * staleness/restart-from-the-past for one create of the reference's
 * sequence: the operator is killed right after the create succeeds, and its
 * restart's first list of every resource is served from the revision just
 * before that create (historical-reads.ts): its caches start without the
 * object it had just made, and catch up through the API server's events.
 */
async function pastOne(
  context: SuiteContext,
  line: CrashLine,
  reference: SpecReference,
): Promise<ScenarioResult> {
  const result = verdictFor(restartFromThePast, line.id, context.clock);
  return inScenario(context, `past-${line.ordinal}`, result, async (scenario) => {
    const crash = await crashAtLine(context, scenario, line, result);
    if (!crash.crashed) return crash.verdict;
    const { hit, kill } = crash;
    const revision = Number(hit.resourceVersion);
    if (!Number.isSafeInteger(revision) || revision < 2) {
      return result(
        "inconclusive",
        `the create's resourceVersion ${hit.resourceVersion ?? "(none)"} is not an etcd revision: the state before it cannot be asked for`,
      );
    }
    const restartRun = (kill?.run ?? 1) + 1;
    const past = scenario.proxy.armHistory({ resourceVersion: String(revision - 1), fromRun: restartRun });
    // The watches from the past would catch up within milliseconds, before the first reconcile
    // could act on the past: held for a while, they leave the restarted operator on a stale view
    // (as an API server whose cache lags serves one), then deliver everything in order.
    const holds = stalledKinds(context, reference).map((kind) =>
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
    const proof = [
      ...crash.proof,
      ...historyNotes(history),
      `the catch-up held at first: ${held.map((h, i) => `${holds[i]?.spec.resource ?? "?"} ${h.taken.length} event(s)`).join(", ")}, delivered in order once the restarted operator had acted`,
    ];
    const failures = historicalFailures(history);
    if (failures.length > 0) {
      throw new Inconclusive(`the past was out of the API server's reach: ${failures.join("; ")}`, proof);
    }
    const ofHit = history.lists.some((l) => l.group === hit.group && l.resource === hit.resource);
    if (!ofHit) {
      throw new Inconclusive(
        `the restarted operator listed no ${hit.resource} after the restart: its view of them was not served from the past`,
        proof,
      );
    }
    const comparison = await compareWithReference(scenario, reference, context.deps.contract);
    const made = scenario
      .operatorWrites({ effect: "created" })
      .filter((e) => e.seq <= hit.seq && !e.subresource);
    const { problems, excused } = losses(scenario, reference, made, comparison);
    const evidence = {
      writes: scenario.operatorWrites({ after: hit.seq - 1 }).map(writeEvidence),
      ...(comparison.diffs.length > 0 ? { diffs: comparison.diffs } : {}),
      notes: [...proof, ...problems, ...excused],
    };
    if (problems.length > 0) {
      return result("failed", `restarted with caches from before ${line.id}: ${problems.join("; ")}`, {
        ...evidence,
        operatorLog: await scenario.operator.logTail(10),
      });
    }
    return result(
      "passed",
      `restarted with caches from resourceVersion ${history.resourceVersion} (before ${line.id}), it kept every object it had made${allowedByPromises(excused)} and converged to the reference`,
      evidence,
    );
  });
}

/** " (but for 2 the contract's promises allow)": how a passing verdict admits what it did not count. */
function allowedByPromises(excused: readonly string[]): string {
  return excused.length === 0
    ? ""
    : ` (but for ${excused.length} the contract's promises allow: see the notes)`;
}

/**
 * What a stale view cost: an end state unlike the reference, objects it had
 * made gone or recreated, and any delete of the operator's that took effect
 * (a stale view must never cost a live object). Objects whose contract
 * entry does not promise `uid` are excused, with why.
 */
function losses(
  scenario: Scenario,
  reference: SpecReference,
  made: readonly WriteEntry[],
  comparison: EndStateComparison,
): { problems: string[]; excused: string[] } {
  // Kinds from the reference too: a gone object may have no live namesake to tell its kind.
  const kinds = new ObjectKinds(scenario.contract, [...reference.children, ...comparison.children]);
  const identity = identityLosses(made, comparison, kinds);
  const problems = [
    ...(endStateMatches(comparison) ? [] : [describeMismatch(comparison)]),
    ...identity.losses,
  ];
  const excused = [...identity.excused];
  for (const e of scenario.operatorWrites({ effect: "deleted" })) {
    const deleted = `it deleted ${e.resource}/${e.name ?? "?"} (write ${e.seq}${e.uid ? `, uid ${e.uid}` : ""})`;
    const why = kinds.withdrawn(e, "uid");
    if (why) excused.push(`not counted: ${deleted}: ${why}`);
    else problems.push(deleted);
  }
  return { problems, excused };
}

/** Touches the custom resource with a foreign label TOUCHES times, each given time to wake a reconcile. */
async function touchCustomResource(context: SuiteContext, scenario: Scenario): Promise<number> {
  const cr = scenario.customResource;
  for (let i = 1; i <= TOUCHES; i++) {
    context.progress(`touch ${i} of ${TOUCHES} of ${describeRef(cr)}`);
    await touch(scenario, cr, randomBytes(4).toString("hex"));
    await new Promise((resolve) => setTimeout(resolve, TOUCH_REACTION_MS));
  }
  return TOUCHES;
}

/** The resources whose catch-up events are held after a restart from the past: the custom resource's and its children's. */
function stalledKinds(
  context: SuiteContext,
  reference: SpecReference,
): { group: string; resource: string }[] {
  const { group, resource } = context.deps.contract.customResource;
  return [
    { group, resource },
    ...childKinds(reference).map((k) => ({ group: k.group, resource: k.resource })),
  ];
}

/**
 * Waits until the restarted run has made a write (or tried one) and then
 * gives it TOUCH_REACTION_MS more to act on what it sees; an operator that
 * finds nothing to do in the past gets the same time from its start.
 */
async function untilOperatorActs(context: SuiteContext, scenario: Scenario, run: number): Promise<void> {
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

function holdProof(proof: WatchFaultProof, resource: string, touches: number): string[] {
  return [
    `held every ${resource} event from the operator's ${proof.streams} watch stream(s) of them: took ${proof.taken.length} (${heldList(proof.taken)}), delivered ${proof.delivered.length} on release, ${proof.bookmarksWithheld} bookmark(s) withheld meanwhile`,
    `${touches} foreign-label touch(es) of the custom resource while they were held, ${TOUCH_REACTION_MS} ms apart`,
  ];
}

function heldList(events: WatchFaultProof["taken"]): string {
  const shown = events.slice(0, 8).map((e) => `${e.type} ${e.name}@${e.resourceVersion ?? "?"}`);
  return events.length > shown.length ? `${shown.join(", ")}, …` : shown.join(", ");
}

function historyNotes(proof: HistoricalReadProof): string[] {
  return [
    `historical reads from resourceVersion ${proof.resourceVersion}: ${proof.refusedWatchLists} watch-list request(s) refused (422) so the informers listed`,
    ...proof.lists.map(
      (l) =>
        `list of ${l.resource}${l.namespace ? ` in ${l.namespace}` : ""} served from ${l.servedFrom} (asked: ${l.asked || "no parameters"}): ${l.code ?? "no answer"}`,
    ),
    ...proof.watches.map(
      (w) =>
        `watch of ${w.resource} from ${proof.resourceVersion}: ${w.code ?? "no answer"}${w.error ? `, then ${w.error}` : ""}`,
    ),
  ];
}
