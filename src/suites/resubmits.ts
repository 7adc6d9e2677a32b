import type { DeliveredEvent } from "../proxy/read-log.js";
import type { WriteEntry } from "../proxy/write-log.js";
import type { Scenario } from "../runner/scenario.js";

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

/** judgeResubmits over a scenario's logs: the raced write, the kit's write before it, and what followed. */
export function resubmitsOf(
  scenario: Scenario,
  conflicted: WriteEntry,
  concurrent: WriteEntry,
  later: readonly WriteEntry[],
): Resubmits {
  const { readLog } = scenario.proxy;
  const watchesKind =
    readLog.query({
      actor: "operator",
      verb: "watch",
      group: conflicted.group,
      resource: conflicted.resource,
      succeeded: true,
    }).length > 0;
  return judgeResubmits({ conflicted, concurrent, later, delivered: readLog.delivered, watchesKind });
}

/** The note for resends a lagging cache explains. */
export function excusedNote(excused: readonly WriteEntry[]): string {
  return `write(s) ${excused.map((w) => `#${w.seq}`).join(", ")} resent the conflicted resourceVersion before the operator's watch had delivered the concurrent change (its cache lagged): not counted`;
}
