import type { Contract } from "../../contract/load-contract.js";
import { lifeTo, updateCount, updateName } from "../../contract/spec-path.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import type { Scenario } from "../../scenario/scenario.js";
import type { SpecReference } from "../../scenario/spec-references.js";
import type { CrashLine } from "./crash-lines.js";

// The ways from one spec to the next that faults are injected on, besides the sample's creation:
// each update of the contract's, and the first of spec exploration's (Contract.updateFaults).
// Most bugs the research tools' tables list live there: a restart right after the operator
// deletes a StatefulSet to grow its volumes, a scale-down read from a stale view.

/** The way from spec k-1 to spec k (from the spec a generated update starts from, for one). */
export interface UpdatePath {
  readonly spec: number;
  /** How messages name it: "update 2", "generated update 3 (spec.port: 8080 → 8081)". */
  readonly name: string;
}

/**
 * The specs whose way gets faults, by the contract's budget: every update
 * of the contract's, then the first `updateFaults.generatedUpdates` of the
 * generated ones; none when `updateFaults.lines` is `none`. Pure.
 */
export function faultedSpecs(
  contract: Pick<Contract, "updates" | "generatedUpdates" | "updateFaults">,
): number[] {
  if (contract.updateFaults.lines === "none") return [];
  const own = contract.updates.length;
  const last = Math.min(updateCount(contract), own + contract.updateFaults.generatedUpdates);
  return Array.from({ length: last }, (_, index) => index + 1);
}

/** Whether the budget gives faults to any generated update's way (so exploration has a use beyond the differential). Pure. */
export function sweepsGeneratedUpdates(contract: Pick<Contract, "updateFaults">): boolean {
  return contract.updateFaults.lines !== "none" && contract.updateFaults.generatedUpdates > 0;
}

/**
 * The update path a reference ends, with the writes its operator made on
 * that way (those after the kit's write of its spec), or why it has none to
 * fault: a generated update the operator did not carry out. Pure.
 */
export function pathOfReference(
  reference: Pick<SpecReference, "spec" | "namespace" | "writes" | "specWrites" | "notCarriedOut">,
  contract: Pick<Contract, "updates" | "generatedUpdates">,
):
  | { readonly path: UpdatePath; readonly namespace: string; readonly writes: readonly WriteEntry[] }
  | { readonly none: string } {
  const path = { spec: reference.spec, name: updateName(contract, reference.spec) };
  if (reference.notCarriedOut) {
    return {
      none: `${path.name}: the operator did not carry it out in its reference (${reference.notCarriedOut.why})`,
    };
  }
  const written = reference.specWrites.find((w) => w.spec === reference.spec);
  if (!written) return { none: `${path.name}: its reference has no write of that spec` };
  return {
    path,
    namespace: reference.namespace,
    writes: reference.writes.filter((w) => w.seq > written.seq),
  };
}

/**
 * What kind of write a line is, for the `by-kind` budget: its effect (a
 * create by any verb is a create) or verb, and what it is written to
 * ("create apps/deployments", "update /services", "update
 * example.com/widgets/status"). Pure.
 */
export function kindOfWrite(
  write: Pick<WriteEntry, "effect" | "verb" | "group" | "resource" | "subresource">,
): string {
  const verb = write.effect === "created" ? "create" : write.verb;
  return `${verb} ${write.group}/${write.resource}${write.subresource ? `/${write.subresource}` : ""}`;
}

/**
 * The lines of one update path a fault follows, by the budget: `all` of
 * them, or `by-kind` the first of each kind of write (kindOfWrite) that a
 * scenario can count on (no timing, findable), in the order written. Pure.
 */
export function chosenLines(
  lines: readonly CrashLine[],
  budget: Contract["updateFaults"]["lines"],
): CrashLine[] {
  if (budget === "none") return [];
  if (budget === "all") return [...lines];
  const seen = new Set<string>();
  return lines.filter((line) => {
    if (line.timing || line.unpaired) return false;
    const kind = kindOfWrite(line.write);
    if (seen.has(kind)) return false;
    seen.add(kind);
    return true;
  });
}

/**
 * Lives a scenario the way its reference lived up to the update: born as
 * the reference was, every step but the last applied and converged. Returns
 * the last step's write, for the caller to make once its fault is armed.
 */
export async function walkToUpdate(
  scenario: Scenario,
  contract: Pick<Contract, "updates" | "generatedUpdates">,
  spec: number,
  progress: (line: string) => void,
): Promise<() => Promise<unknown>> {
  const { bornAt, steps } = lifeTo(contract, spec);
  const last = steps.at(-1);
  if (!last) throw new RangeError(`spec ${spec} is the sample's: it has no update to walk to`);
  progress(`walking to ${updateName(contract, spec)}: converging the spec before it`);
  await scenario.startWithSample(bornAt);
  await scenario.converge(
    bornAt === 0
      ? "convergence of the sample"
      : `convergence of the sample born with ${updateName(contract, bornAt)}'s spec`,
  );
  for (const step of steps.slice(0, -1)) {
    await scenario.applyUpdate(step.patch, step.spec);
    await scenario.converge(`convergence of ${updateName(contract, step.spec)}`);
  }
  // A refusal of the update is Inconclusive (spec-writes.ts), as it is for its reference.
  return () => scenario.applyUpdate(last.patch, last.spec);
}
