import type { Contract } from "../../contract/load-contract.js";
import type { HistoricalReadProof } from "../../proxy/historical-reads.js";
import type { WatchFaultProof } from "../../proxy/watch-faults.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import type { ChildRoles } from "../../scenario/child-roles.js";
import type { ChildRecord, LiveChild } from "../../scenario/reference-state.js";
import type { ReferenceChild, SpecReference } from "../../scenario/spec-references.js";
import type { TargetContext } from "../check.js";
import { describeMismatch, endStateMatches, type EndStateComparison } from "../shared/end-state.js";
import { identityLosses } from "../shared/identity-losses.js";
import { ObjectKinds } from "../shared/promised.js";
import { keptThroughUpdate, type FaultPath } from "../shared/update-paths.js";
import { compareAfterFault } from "../shared/after-fault.js";

/**
 * Stale views (docs/design/staleness.md): the operator's caches lag the API
 * server, miss intermediate states, or start from the past, through the
 * proxy's watch seam and the API server's own history, on an unmodified
 * operator. Every scenario's faults prove in the evidence that they acted;
 * one that did not (nothing held, nothing coalesced, a past the API server
 * no longer had) makes the scenario inconclusive, never a pass. What the
 * suite's checks share: the child kinds a fault holds, what a stale view
 * cost, and the notes that prove the faults acted. Pure.
 */

/** How long the kit gives the operator to act on one touch (or a restart from the past) before going on. */
export const TOUCH_REACTION_MS = 1_500;

/** One kind of the reference's children. */
export interface ChildKind {
  readonly group: string;
  readonly resource: string;
  /** The reference's children of this kind, by name. */
  readonly names: readonly string[];
}

/** The kinds of the reference's children, in the order the operator first created one. */
export function childKinds(
  children: readonly Pick<ChildRecord, "group" | "resource" | "ref">[],
): ChildKind[] {
  const kinds = new Map<string, ChildKind>();
  for (const child of children) {
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

/** The reference of `spec` a check asked for (`references`); the runner provides it before any scenario opens. */
export function specReference(context: Pick<TargetContext, "references">, spec: number): SpecReference {
  const reference = context.references.get(spec);
  if (!reference) throw new Error(`no reference state of spec ${spec}`);
  return reference;
}

/** Where a stale view left the scenario, once it converged: what `losses` judges. */
export interface StaleViewEnd {
  /** The children of the reference the end state must match. */
  readonly reference: readonly ReferenceChild[];
  /** Which child is which across lives (the reference's roles). */
  readonly roles?: ChildRoles;
  /** The operator's children as they are at the end. */
  readonly live: readonly LiveChild[];
  /** The operator's creates before the stale view: they must still be the same objects. */
  readonly made: readonly WriteEntry[];
  /** Every delete of the operator's in the scenario that took effect. */
  readonly deletes: readonly WriteEntry[];
}

/**
 * What a stale view cost: an end state unlike the reference, objects it had
 * made gone or recreated, and any delete of the operator's that took effect
 * (a stale view must never cost a live object). Objects whose contract
 * entry does not promise `uid` are excused, with why. Pure.
 */
export function losses(
  contract: Pick<Contract, "promises" | "customResource">,
  end: StaleViewEnd,
  comparison: EndStateComparison,
): { problems: string[]; excused: string[] } {
  // Kinds from the reference too: a gone object may have no live namesake to tell its kind.
  const kinds = new ObjectKinds(contract, [...end.reference, ...comparison.children]);
  const identity = identityLosses(end.made, comparison, kinds);
  const problems = [
    ...(endStateMatches(comparison) ? [] : [describeMismatch(comparison)]),
    ...identity.losses,
  ];
  const excused = [...identity.excused];
  for (const e of end.deletes) {
    const deleted = `it deleted ${e.resource}/${e.name ?? "?"} (write ${e.seq}${e.uid ? `, uid ${e.uid}` : ""})`;
    const why = kinds.withdrawn(e, "uid");
    if (why) excused.push(`not counted: ${deleted}: ${why}`);
    else problems.push(deleted);
  }
  return { problems, excused };
}

/** " (but for 2 the contract's promises allow)": how a passing verdict admits what it did not count. */
export function allowedByPromises(excused: readonly string[]): string {
  return excused.length === 0
    ? ""
    : ` (but for ${excused.length} the contract's promises allow: see the notes)`;
}

/** "ADDED web@123, MODIFIED web@124": the first events a watch fault took or delivered. */
export function heldList(events: WatchFaultProof["taken"]): string {
  const shown = events.slice(0, 8).map((e) => `${e.type} ${e.name}@${e.resourceVersion ?? "?"}`);
  return events.length > shown.length ? `${shown.join(", ")}, …` : shown.join(", ");
}

/** The proof that a hold acted: what it took and delivered, and the touches made meanwhile. */
export function holdNotes(proof: WatchFaultProof, resource: string, touches: number): string[] {
  return [
    `held every ${resource} event from the operator's ${proof.streams} watch stream(s) of them: took ${proof.taken.length} (${heldList(proof.taken)}), delivered ${proof.delivered.length} on release, ${proof.bookmarksWithheld} bookmark(s) withheld meanwhile`,
    `${touches} foreign-label touch(es) of the custom resource while they were held, ${TOUCH_REACTION_MS} ms apart`,
  ];
}

/** The proof of historical reads: what was listed from the past, and how the watches from it went. */
export function historyNotes(proof: HistoricalReadProof): string[] {
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

/**
 * On an update's way, the end with what the update itself removes or
 * replaces left out of what must be kept and of the deletes that count
 * (keptThroughUpdate), and a note for each. Pure.
 */
export function throughUpdate(
  end: StaleViewEnd,
  path: FaultPath | undefined,
): { end: StaleViewEnd; notes: string[] } {
  if (!path) return { end, notes: [] };
  const made = keptThroughUpdate(end.made, end.reference, end.roles, path);
  const deletes = keptThroughUpdate(end.deletes, end.reference, end.roles, path);
  // A create and a delete of one object earn the same note: once is enough.
  return {
    end: { ...end, made: made.kept, deletes: deletes.kept },
    notes: [...new Set([...made.notes, ...deletes.notes])],
  };
}

/**
 * A stale view's end, judged as both staleness checks judge it: compared
 * with the reference after the fault (compareAfterFault), what the update
 * itself removes or replaces set apart (throughUpdate), and what the view
 * cost (losses). Pure.
 */
export function judgedEnd(
  observation: {
    readonly end: StaleViewEnd;
    readonly writes: readonly WriteEntry[];
    readonly path?: FaultPath;
    readonly learnedFrom?: readonly ReferenceChild[];
  },
  contract: Pick<Contract, "drift" | "clock" | "promises" | "customResource">,
): ReturnType<typeof compareAfterFault> & ReturnType<typeof losses> & { readonly update: string[] } {
  const { end: seen, writes, path, learnedFrom } = observation;
  const { comparison, volatile } = compareAfterFault(seen.live, seen.reference, contract, {
    ...(seen.roles ? { roles: seen.roles } : {}),
    writes,
    ...(learnedFrom ? { learnedFrom } : {}),
  });
  const { end, notes: update } = throughUpdate(seen, path);
  return { comparison, volatile, ...losses(contract, end, comparison), update };
}
