import { createHash } from "node:crypto";
import { UsageError } from "../errors.js";

/**
 * One job's share of a run split across the jobs of a workflow matrix
 * (`--shard 2/3`). Scenarios are assigned by a hash of their stable key
 * (check id and target), not by their position in a list: a shard's share
 * does not move when a check gains or loses a scenario elsewhere, and every
 * job computes the same assignment without talking to the others.
 *
 * What every job still does: start its cluster, compute the reference
 * states (the targets are derived from them) and run the cluster sanity
 * check. Targets derived from a reference whose write sequence depends on
 * timing (crash lines) may differ between jobs; each shard's report lists
 * the targets it left to the others, so `merge` can name any that no shard
 * ran instead of losing them.
 */
export interface Shard {
  /** 1-based. */
  readonly index: number;
  readonly count: number;
}

/** The whole run in one job. */
export const WHOLE_RUN: Shard = { index: 1, count: 1 };

/** Parses "i/n" (1 <= i <= n); a UsageError naming the bad value otherwise. */
export function parseShard(text: string, setting = "--shard"): Shard {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const index = Number(match?.[1]);
  const count = Number(match?.[2]);
  if (!match || count < 1 || index < 1 || index > count) {
    throw new UsageError(
      "cli/invalid-shard",
      `${setting} ${JSON.stringify(text)}: expected i/n with 1 <= i <= n, e.g. 1/3 for the first of three jobs`,
    );
  }
  return { index, count };
}

/** The key a scenario is assigned by, also how a report names it: `check#target`. */
export function scenarioKey(check: string, target: string): string {
  return `${check}#${target}`;
}

/** Whether the scenario with this key is this shard's to run. */
export function inShard(shard: Shard, key: string): boolean {
  if (shard.count === 1) return true;
  // A cryptographic hash only for its even spread and its stability across Node versions.
  const bucket = createHash("sha256").update(key).digest().readUInt32BE(0) % shard.count;
  return bucket === shard.index - 1;
}
