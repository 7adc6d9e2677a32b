import type { Contract } from "../../contract/load-contract.js";
import { lifeTo, updateCount, updateName } from "../../contract/spec-path.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import type { Scenario } from "../../scenario/scenario.js";
import type { SpecReference } from "../../scenario/spec-references.js";
import { writeKey, type ChildRoles } from "../../scenario/child-roles.js";
import type { ReferenceChild } from "../../scenario/spec-references.js";
import type { TargetContext } from "../check.js";
import { crashLines, type CrashLine } from "./crash-lines.js";

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
 * An update path a fault is on, with what its reference did on the way
 * that a faulted operator may do too.
 */
export interface FaultPath extends UpdatePath {
  /** The objects (writeKey) the reference deleted on the way: their recreation is the update's. */
  readonly replaced: readonly string[];
}

/** A line on the way to an update, with the end it must reach. */
export interface PathLine {
  readonly line: CrashLine;
  readonly path: FaultPath;
  /** The children of the updated spec's reference. */
  readonly reference: readonly ReferenceChild[];
  readonly roles?: ChildRoles;
  /** Spec 0's reference children, the lives the per-life values were learned from. */
  readonly learnedFrom: readonly ReferenceChild[];
}

/**
 * The lines the contract's budget chooses on the way to each faulted
 * update (faultedSpecs, chosenLines), each with its path and the reference
 * of the spec it ends on; none for an update whose reference is missing
 * or was not carried out. Pure.
 */
export function updatePathLines({ contract, references }: TargetContext): PathLine[] {
  const zero = references.get(0);
  if (!zero) return [];
  return faultedSpecs(contract).flatMap((spec): PathLine[] => {
    const updated = references.get(spec);
    const way = updated && pathOfReference(updated, contract);
    if (!updated || !way || "none" in way) return [];
    const { roles } = updated;
    const lines = chosenLines(
      crashLines({ ...way, ...(roles ? { roles } : {}) }, contract),
      contract.updateFaults.lines,
    );
    const replaced = [
      ...new Set(
        way.writes.filter((w) => w.verb === "delete" && !w.subresource).map((w) => writeKey(roles, w)),
      ),
    ];
    return lines.map((line) => ({
      line,
      path: { ...way.path, replaced },
      reference: updated.children,
      ...(roles ? { roles } : {}),
      learnedFrom: zero.children,
    }));
  });
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
 * scenario can count on (no timing, findable), in the order written, status
 * writes left out: a crash after the operator reports is swept on every
 * status write of the sample's creation, and on an update's way it would
 * cost a scenario per update for what those already show. Pure.
 */
export function chosenLines(
  lines: readonly CrashLine[],
  budget: Contract["updateFaults"]["lines"],
): CrashLine[] {
  if (budget === "none") return [];
  if (budget === "all") return [...lines];
  const seen = new Set<string>();
  return lines.filter((line) => {
    if (line.timing || line.unpaired || line.write.subresource === "status") return false;
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

/**
 * Of the objects created before a fault on an update's way, those the
 * update keeps: the reference of the updated spec has an object of their
 * role, and did not delete one of that role on its own way there (an
 * operator that replaces a StatefulSet to grow its volumes recreates it by
 * design). The others are named in notes. Pure.
 */
export function keptThroughUpdate(
  created: readonly WriteEntry[],
  reference: readonly ReferenceChild[],
  roles: ChildRoles | undefined,
  path: FaultPath,
): { readonly kept: WriteEntry[]; readonly notes: string[] } {
  const kept: WriteEntry[] = [];
  const notes: string[] = [];
  const ends = new Set(
    reference.map((c) => writeKey(roles, { group: c.group, resource: c.resource, name: c.ref.name })),
  );
  for (const entry of created) {
    const key = writeKey(roles, entry);
    if (!ends.has(key)) {
      notes.push(
        `not counted as lost: ${entry.resource}/${entry.name ?? ""}: the reference of ${path.name} has no ${key} (the update removes it)`,
      );
    } else if (path.replaced.includes(key)) {
      notes.push(
        `not counted as recreated: ${entry.resource}/${entry.name ?? ""}: the reference deleted ${key} on its way to ${path.name} too`,
      );
    } else kept.push(entry);
  }
  return { kept, notes };
}
