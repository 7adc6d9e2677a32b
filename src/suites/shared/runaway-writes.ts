import type { WriteEntry } from "../../proxy/write-log.js";

/** This many creates (or rollouts of one workload) in one convergence wait is work without end, not progress. */
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

/** Where a workload keeps the template of its Pods: a change there starts a rollout. */
const POD_TEMPLATE = /^spec\.(template|jobTemplate\.spec\.template)\./;

/**
 * The workload whose pod template an operator that never fell quiet kept
 * changing: the first object with at least RUNAWAY_CREATES writes that
 * changed its pod template, as ["deployments/web", count]; undefined when
 * there is none. Each such change is a rollout, and a rollout's status
 * changes wake the operator again: a template it rewrites on every
 * reconcile (a timestamp) rolls without end. Progress never looks so: a
 * spec's inputs change a template once, and a staged rollout moves a
 * partition or a replica count, not the template. Writes whose changed
 * fields are unknown are not counted.
 */
export function runawayRollout(writes: readonly WriteEntry[]): readonly [string, number] | undefined {
  const rollouts = new Map<string, number>();
  for (const e of writes) {
    if (e.effect !== "changed" || e.subresource || !e.changedPaths?.some((p) => POD_TEMPLATE.test(p)))
      continue;
    const key = `${e.resource}/${e.name ?? "?"}`;
    rollouts.set(key, (rollouts.get(key) ?? 0) + 1);
  }
  return [...rollouts].find(([, count]) => count >= RUNAWAY_CREATES);
}
