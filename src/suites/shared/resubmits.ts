import type { DeliveredEvent } from "../../proxy/read-log.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import type { Scenario } from "../../scenario/scenario.js";

/** The operator's writes that resent a resourceVersion which had just conflicted, judged. */
export interface Resubmits {
  /** Sent when the operator could have known better: blamed. */
  readonly blamed: readonly WriteEntry[];
  /** Sent before its watch had delivered the concurrent change: its cache lagged. Not counted. */
  readonly excused: readonly WriteEntry[];
}

/**
 * After `conflicted` (a write answered 409 because the kit's `concurrent`
 * write came first), finds the later writes of the same object that carried
 * the same resourceVersion again, and judges each. A controller that
 * requeues on a conflict and reads its informer's cache again may resend
 * the old object until the watch delivers the concurrent change: that is
 * cache lag, which the operator cannot see, not a retry that never
 * re-reads. A resend counts against the operator when its watch of that
 * kind had already delivered the object at the concurrent write's
 * resourceVersion before the resend was sent, or when it does not watch
 * that kind at all (it reads the API server directly, so it had no cache to
 * wait for).
 */
export function judgeResubmits(input: {
  readonly conflicted: WriteEntry;
  readonly concurrent: WriteEntry;
  readonly later: readonly WriteEntry[];
  readonly delivered: readonly DeliveredEvent[];
  /** Whether the operator has a watch on the object's kind. */
  readonly watchesKind: boolean;
}): Resubmits {
  const { conflicted, concurrent } = input;
  const stale = conflicted.code === 409 ? conflicted.sentResourceVersion : undefined;
  if (stale === undefined) return { blamed: [], excused: [] };
  const sameObject = (w: { group: string; resource: string; namespace?: string; name?: string }) =>
    w.group === conflicted.group &&
    w.resource === conflicted.resource &&
    w.namespace === conflicted.namespace &&
    w.name === conflicted.name;
  const resent = input.later.filter(
    (w) =>
      w.seq > conflicted.seq &&
      sameObject(w) &&
      (w.subresource ?? "") === (conflicted.subresource ?? "") &&
      w.sentResourceVersion === stale,
  );
  const seen = input.delivered.find((e) => sameObject(e) && e.resourceVersion === concurrent.resourceVersion);
  const blamed = resent.filter(
    (w) => !input.watchesKind || (seen !== undefined && seen.beforeWriteSeq <= w.seq),
  );
  return { blamed, excused: resent.filter((w) => !blamed.includes(w)) };
}

/**
 * What `judgeResubmits` reads from a scenario's read log, as plain data for
 * an observation: the watch events delivered for the raced object, and
 * whether the operator watches its kind at all.
 */
export interface ResubmitInputs {
  /** The operator's delivered watch events of the raced object (the only ones judgeResubmits looks at). */
  readonly delivered: readonly DeliveredEvent[];
  /** Whether the operator has a successful watch of the object's kind. */
  readonly watchesKind: boolean;
}

/**
 * What `judgeResubmits` needs from the read log about `conflicted`, the
 * write the kit raced: read in observe, so the judge can call the pure
 * `judgeResubmits` with it.
 */
export function resubmitInputs(scenario: Scenario, conflicted: WriteEntry): ResubmitInputs {
  const { readLog } = scenario.proxy;
  const watchesKind =
    readLog.query({
      actor: "operator",
      verb: "watch",
      group: conflicted.group,
      resource: conflicted.resource,
      succeeded: true,
    }).length > 0;
  // The same identity judgeResubmits matches events on: nothing it would use is left out.
  const delivered = readLog.delivered.filter(
    (e) =>
      e.group === conflicted.group &&
      e.resource === conflicted.resource &&
      e.namespace === conflicted.namespace &&
      e.name === conflicted.name,
  );
  return { delivered, watchesKind };
}

/** The note for resends a lagging cache explains. */
export function excusedNote(excused: readonly WriteEntry[]): string {
  return `write(s) ${excused.map((w) => `#${w.seq}`).join(", ")} resent the conflicted resourceVersion before the operator's watch had delivered the concurrent change (its cache lagged): not counted`;
}
