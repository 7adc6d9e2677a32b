import type { WriteEntry } from "../../proxy/write-log.js";

/** This many creates in one convergence wait is creation without end, not progress. */
export const RUNAWAY_CREATES = 5;

/**
 * The objects an operator that never fell quiet kept creating: the first
 * group (by `key`) of successful creates with at least RUNAWAY_CREATES
 * members, as [key, count]; undefined when there is none.
 */
export function runawayCreation(
  writes: readonly WriteEntry[],
  key: (entry: WriteEntry) => string,
): readonly [string, number] | undefined {
  const creates = new Map<string, number>();
  for (const e of writes) if (e.effect === "created") creates.set(key(e), (creates.get(key(e)) ?? 0) + 1);
  return [...creates].find(([, count]) => count >= RUNAWAY_CREATES);
}
