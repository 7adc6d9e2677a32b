/**
 * The one rule by which every wait of a scenario (convergence, a fault
 * taking effect, a drift repair, a pre-existing child, a spec update
 * followed) decides that the operator is done: it has been silent (no write
 * completed, none in flight) for the quiet period, counted from the last
 * stimulus, so that a restarted operator or a touched object always gets the
 * whole period to react before the kit calls it quiet. Pure.
 */

/** How long an operator has been silent, and how long since the kit last gave it a reason to act. */
export interface Silence {
  /** Since its last write completed; 0 while one is in flight. */
  readonly operatorIdleMs: number;
  /** Since the wait's stimulus (a create, an update, a touch, a perturbation, a restart). */
  readonly sinceStimulusMs: number;
}

/**
 * How long an operator that has not reacted to a change may stay silent
 * before the kit concludes it is not going to: an operator that watches the
 * object reacts at once (one that repairs only on a periodic resync is
 * judged by what it did within this time).
 */
export const GIVE_UP_IDLE_MS = 10_000;

/** How long the operator has been silent since the stimulus. */
export function silentFor(silence: Silence): number {
  return Math.max(0, Math.min(silence.operatorIdleMs, silence.sinceStimulusMs));
}

/** Whether the operator has been silent for the quiet period since the stimulus. */
export function isQuiet(silence: Silence, quietPeriodMs: number): boolean {
  return silentFor(silence) >= quietPeriodMs;
}

/** Whether an operator that has not done what the wait waits for has been silent so long it never will. */
export function hasGivenUp(silence: Silence, giveUpMs: number = GIVE_UP_IDLE_MS): boolean {
  return silentFor(silence) >= giveUpMs;
}

/** A watch event the proxy delivered to the operator, as far as `updateDelivered` reads it. */
export interface Delivery {
  readonly group: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly name: string;
  readonly resourceVersion: string;
}

/**
 * Whether the operator's watch has delivered the object at `resourceVersion`
 * (a spec update's) or later: it has had the chance to act on the update.
 * Resource versions are opaque, but the API server's are etcd revisions:
 * when both are decimal, a later one counts (a coalesced watch may skip the
 * update's own event); otherwise only the same one does. Pure.
 */
export function updateDelivered(
  deliveries: readonly Delivery[],
  object: UpdatedObject,
  resourceVersion: string,
): boolean {
  return deliveries.some(
    (e) =>
      e.group === object.group &&
      e.resource === object.resource &&
      e.namespace === object.namespace &&
      e.name === object.name &&
      atLeast(e.resourceVersion, resourceVersion),
  );
}

/** The custom resource a spec update wrote. */
export interface UpdatedObject {
  readonly group: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly name: string;
}

/** An operator read through the proxy, as far as `updateRead` reads it (a ReadEntry). */
export interface Read {
  readonly verb: "get" | "list" | "watch";
  readonly group: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly resourceVersion?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly code: number;
}

/**
 * Whether the operator read the updated object by a get or a list that
 * began after the update was answered (`reads`: only those) and must have
 * seen it: the other way an operator learns of an update (a relist after
 * its watch ended, a direct get). Only a read that shows the latest state
 * counts: one without a resourceVersion (consistent), or from one at least
 * the update's; a read from "0" (any cached state) or a filtered list may
 * not have shown it. Pure.
 */
export function updateRead(reads: readonly Read[], object: UpdatedObject, resourceVersion: string): boolean {
  return reads.some(
    (r) =>
      (r.verb === "get" || r.verb === "list") &&
      r.code >= 200 &&
      r.code < 300 &&
      r.group === object.group &&
      r.resource === object.resource &&
      (r.namespace === undefined || r.namespace === object.namespace) &&
      (r.name === undefined || r.name === object.name) &&
      (r.verb === "get" || (r.labelSelector === undefined && r.fieldSelector === undefined)) &&
      (r.resourceVersion === undefined ||
        r.resourceVersion === "" ||
        (r.resourceVersion !== "0" && atLeast(r.resourceVersion, resourceVersion))),
  );
}

/** Whether resourceVersion `seen` is `wanted` or later (comparable only when both are decimal etcd revisions). */
function atLeast(seen: string, wanted: string): boolean {
  const decimal = /^\d+$/;
  return seen === wanted || (decimal.test(seen) && decimal.test(wanted) && BigInt(seen) >= BigInt(wanted));
}
