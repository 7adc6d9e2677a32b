/**
 * The suites, in the order a run judges them. A module of its own, importing
 * nothing, so that the contract's schema can name the suites without
 * importing the checks; the registry (src/suites/index.ts) must define
 * exactly these, or it does not compile.
 */

/** The suites a contract or `--suite` can choose. */
export const SELECTABLE_SUITES = [
  "drift",
  "status-stability",
  "idempotency",
  "conflict",
  "staleness",
  "differential",
  "deletion",
] as const;

/** Every suite: the cluster's sanity first (it always runs), then the selectable ones. */
export const SUITE_NAMES = ["cluster", ...SELECTABLE_SUITES] as const;

export type SuiteName = (typeof SUITE_NAMES)[number];
