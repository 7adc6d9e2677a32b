import type { WriteEntry } from "../../proxy/write-log.js";
import { describeClockWrite } from "../../scenario/clock-marks.js";
import type { EndStateComparison } from "./end-state.js";
import type { ObjectKinds } from "./promised.js";

/**
 * Objects of `created` (the operator's creates) that are no longer the
 * same: gone from the live children the comparison found, or there under
 * the same name with another UID (deleted and recreated). An object whose
 * contract entry does not promise `uid` is `excused`, with why.
 */
export function identityLosses(
  created: readonly WriteEntry[],
  comparison: EndStateComparison,
  kinds: ObjectKinds,
): { losses: string[]; excused: string[] } {
  const losses: string[] = [];
  const excused: string[] = [];
  for (const entry of created) {
    if (entry.subresource || !entry.name || !entry.uid) continue;
    const live = comparison.children.find(
      (c) => c.resource === entry.resource && c.group === entry.group && c.ref.name === entry.name,
    );
    const problem = !live
      ? `${entry.resource}/${entry.name} (uid ${entry.uid}) is gone`
      : live.uid !== entry.uid
        ? `${entry.resource}/${entry.name} was recreated (uid ${entry.uid} -> ${live.uid})`
        : undefined;
    if (problem === undefined) continue;
    if (entry.clock) {
      // What a schedule made, it may also prune (a history limit): the rule is for answers, not ticks.
      excused.push(`not counted: ${problem}: the operator's clock made it (${describeClockWrite(entry)})`);
      continue;
    }
    const why = kinds.withdrawn(entry, "uid");
    if (why) excused.push(`not counted: ${problem}: ${why}`);
    else losses.push(problem);
  }
  return { losses, excused };
}
