import type { AnyCheck, Suite } from "./check.js";
import { cluster } from "./cluster/index.js";
import { conflict } from "./conflict/index.js";
import { deletion } from "./deletion/index.js";
import { differential } from "./differential/index.js";
import { drift } from "./drift/index.js";
import { idempotency } from "./idempotency/index.js";
import { staleness } from "./staleness/index.js";
import { statusStability } from "./status-stability/index.js";
import { SUITE_NAMES, type SuiteName } from "./suite-names.js";

/**
 * The registry: every suite by name. A suite missing here, or one whose
 * name is not in SUITE_NAMES, does not compile; the schema's suite names,
 * the known check ids, the kill matrix's list of checks and the docs test
 * all come from here.
 */
const BY_NAME = {
  cluster,
  drift,
  "status-stability": statusStability,
  idempotency,
  conflict,
  staleness,
  differential,
  deletion,
} as const satisfies { readonly [N in SuiteName]: Suite & { readonly name: N } };

/** The suites in the order a run judges them (SUITE_NAMES' order): the cluster's sanity first. */
export const SUITES: readonly Suite[] = SUITE_NAMES.map((name) => BY_NAME[name]);

/** Every check this version can judge, in the order a run reports them. */
export const KNOWN_CHECKS: readonly AnyCheck[] = SUITES.flatMap((suite) => suite.checks);
