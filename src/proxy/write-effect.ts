import type { Verb } from "./request-classifier.js";

/**
 * What one write did to what the API server stores. Every oracle that
 * judges writes reads this, so it is decided in one place, from facts the
 * proxy observed, and `ambiguous` whenever those facts do not settle it: no
 * oracle counts an ambiguous write as a violation.
 */
export type WriteEffect = "created" | "changed" | "no-op" | "deleted" | "rejected" | "ambiguous";

/** The effects that changed what is stored: an effective write (never `ambiguous`: the proxy could not tell). */
const EFFECTIVE: ReadonlySet<WriteEffect> = new Set(["created", "changed", "deleted"]);

/** Whether a write changed what the API server stores: it created, changed or deleted an object. */
export function isEffective(write: { readonly effect: WriteEffect }): boolean {
  return EFFECTIVE.has(write.effect);
}

/** The facts about one write that decide its effect. */
export interface EffectFacts {
  readonly verb: Verb;
  readonly subresource?: string;
  /** The HTTP status the API server (or a fault) answered; 0 when nothing was answered. */
  readonly status: number;
  /** The write asked for a dry run: nothing is stored whatever the answer. */
  readonly dryRun?: boolean;
  /** The write stores no object by design (reviews, token requests: tagged `review` in the write log). */
  readonly storesNothing?: boolean;
  /**
   * The resourceVersion the write was conditioned on: the operator's own
   * precondition, or the one the proxy added after reading the object. A
   * successful conditional write was applied to exactly that state.
   */
  readonly basedOn?: string;
  /** The object as the proxy read it just before the write (absent when it did not read). */
  readonly prior?: {
    readonly exists: boolean;
    readonly resourceVersion?: string;
    readonly terminating?: boolean;
  };
  /** From a successful answer: the object's resourceVersion after the write. */
  readonly answeredResourceVersion?: string;
  /** For deletecollection: how many items the answer listed; undefined when unknown. */
  readonly deletedItems?: number;
  /**
   * An update or patch answered with the object terminating and no finalizer
   * left: it removed the last one, and the API server deleted the object
   * (its resourceVersion stays where the delete left it).
   */
  readonly releasedLastFinalizer?: boolean;
}

export interface EffectDecision {
  readonly effect: WriteEffect;
  /** Why, in a few words, for evidence (always set for no-op, ambiguous and rejected). */
  readonly why?: string;
}

/**
 * Decides a write's effect. The rules, in order:
 * - an unanswered or failed write changed nothing: `rejected`;
 * - a dry run, or a create of something that is never stored: `no-op`;
 * - a create (or an update/patch answered 201, as an apply that creates is): `created`;
 * - an update or patch with a precondition: `changed` exactly when the
 *   resourceVersion moved (the API server does not bump it for a write that
 *   changes nothing);
 * - without one, a resourceVersion that did not move since the proxy's read
 *   is a `no-op` (nobody changed anything); one that moved may be another
 *   writer's, so `ambiguous`;
 * - a delete: `deleted`, except a delete of an object already terminating
 *   that left it as it was: `no-op`;
 * - an update or patch that removed the last finalizer of a terminating
 *   object: `deleted` (checked before the resourceVersion, which the final
 *   release does not move).
 */
export function decideEffect(facts: EffectFacts): EffectDecision {
  const { verb, status } = facts;
  if (status === 0) return { effect: "rejected", why: "never answered" };
  if (status < 200 || status >= 300) return { effect: "rejected", why: `answered ${status}` };
  if (facts.dryRun) return { effect: "no-op", why: "dry run" };
  switch (verb) {
    case "create":
      if (facts.storesNothing) return { effect: "no-op", why: "stores nothing" };
      return { effect: "created" };
    case "update":
    case "patch":
      return decideUpdate(facts);
    case "delete":
      if (facts.prior?.terminating && facts.answeredResourceVersion === facts.prior.resourceVersion) {
        return { effect: "no-op", why: "already terminating" };
      }
      return { effect: "deleted" };
    case "deletecollection":
      if (facts.deletedItems === undefined) return { effect: "ambiguous", why: "answer lists no items" };
      return facts.deletedItems > 0 ? { effect: "deleted" } : { effect: "no-op", why: "nothing matched" };
    default:
      return { effect: "ambiguous", why: `not a write verb: ${verb}` };
  }
}

function decideUpdate(facts: EffectFacts): EffectDecision {
  if (facts.status === 201) return { effect: "created" };
  if (facts.releasedLastFinalizer) return { effect: "deleted", why: "removed the last finalizer" };
  const after = facts.answeredResourceVersion;
  if (after === undefined) return { effect: "ambiguous", why: "answer carries no resourceVersion" };
  if (facts.basedOn !== undefined) {
    return after === facts.basedOn
      ? { effect: "no-op", why: "resourceVersion unchanged" }
      : { effect: "changed" };
  }
  const before = facts.prior?.resourceVersion;
  if (before === undefined) return { effect: "ambiguous", why: "state before the write unknown" };
  if (after === before) return { effect: "no-op", why: "resourceVersion unchanged" };
  return { effect: "ambiguous", why: "unconditional write; another writer may have changed the object" };
}
