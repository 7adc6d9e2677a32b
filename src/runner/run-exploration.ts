import type { Contract } from "../contract/load-contract.js";
import type { ExplorationReport } from "../report/report-model.js";
import type { ScenarioDeps } from "../scenario/scenario.js";
import { exploreSpec } from "../scenario/spec-exploration.js";
import type { SpecReferences } from "../scenario/spec-references.js";
import { changedNothing } from "../suites/differential/compare-ends.js";
import { updateEqualsCreation } from "../suites/differential/update-equals-creation.js";
import { crashAfterCreate } from "../suites/idempotency/crash-after-create.js";
import { crashAfterWrite } from "../suites/idempotency/crash-after-write.js";
import { sweepsGeneratedUpdates } from "../suites/shared/update-paths.js";
import { ownCreateUnseen } from "../suites/staleness/own-create-unseen.js";
import { restartFromThePast } from "../suites/staleness/restart-from-the-past.js";
import type { Limiter } from "../util/limiter.js";

// Spec exploration in a run: before the suites, the generated updates are chosen (exploreSpec)
// and the references extended with their specs; after them, the report notes the fields whose
// generated update changed nothing visible.

/** --generated-updates, --seed and --update-faults, as given: what chooses the run's scenarios beyond the contract. */
export interface ExplorationFlags {
  readonly max?: number;
  readonly seed?: number;
  readonly updateFaults?: Contract["updateFaults"]["lines"];
}

/**
 * Whether the run explores the spec: the differential judges the generated
 * updates, and the checks that fault the way to an update (the crash sweep,
 * the restart from the past, own creates unseen) sweep the ways of the first of them.
 */
export function explorationWanted(selected: ReadonlySet<string>, contract: Contract): boolean {
  const sweeps = [crashAfterCreate, crashAfterWrite, restartFromThePast, ownCreateUnseen].some((c) =>
    selected.has(c.id),
  );
  return selected.has(updateEqualsCreation.id) || (sweeps && sweepsGeneratedUpdates(contract));
}

/**
 * The contract with its generated updates, the references that compute
 * their specs too (sharing what is computed), and what exploration did;
 * undefined when the contract explores nothing. Spec 0's reference ranks
 * the candidates, so it is asked for here.
 */
export async function exploreForRun(
  contract: Contract,
  references: SpecReferences,
  options: {
    readonly deps: ScenarioDeps;
    readonly slots: Limiter;
    readonly progress: (line: string) => void;
  },
): Promise<
  | { readonly contract: Contract; readonly references: SpecReferences; readonly report: ExplorationReport }
  | undefined
> {
  const { exploration } = contract;
  if (exploration === undefined) return undefined;
  const explored = await exploreSpec({ ...contract, exploration }, options.deps, {
    slots: options.slots,
    reference0: () => references.forSpec(0, options.progress),
    progress: options.progress,
  });
  return {
    contract: explored.contract,
    references: references.withGeneratedUpdates(explored.contract),
    report: explored.report,
  };
}

/** The exploration's report with the generated updates that changed nothing visible, when there are any. */
export async function withNoEffect(
  exploration: ExplorationReport,
  references: SpecReferences,
  contract: Contract,
): Promise<ExplorationReport> {
  const zero = await references.forSpec(0).catch(() => undefined);
  if (!zero) return exploration;
  const noEffect = await references.withoutEffect((here, base) => changedNothing(here, base, zero, contract));
  return noEffect.length > 0 ? { ...exploration, noEffect } : exploration;
}
