import type { Contract } from "../../contract/load-contract.js";
import { describeVolatile, promisesFor, type VolatileField } from "../../contract/promises.js";
import type { Evidence } from "../../report/report-model.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import type { ChildRoles } from "../../scenario/child-roles.js";
import type { LiveChild } from "../../scenario/reference-state.js";
import type { ReferenceChild } from "../../scenario/spec-references.js";
import { parsePath, pathWithin } from "../../util/object-paths.js";
import type { Judgement } from "../check.js";
import { compareEndStates, unpairedVerdict, type EndStateComparison } from "./end-state.js";

// The end state after a fault (a crash and restart, a stale view) against the reference of the
// spec it ends on: every field the operator manages, as the differential compares an update
// with a creation, not only what a drift repair restores. An operator that writes an annotation
// only when its create reports "created" loses it to a crash right after the create; only a
// comparison of everything it manages sees that.

/** What the lives of a scenario and its reference share, for the comparison. */
export interface FaultLives {
  /** The roles of the reference (spec 0's two lives). */
  readonly roles?: ChildRoles;
  /** The scenario's operator writes: a value generated once per life must not be written anew. */
  readonly writes: readonly WriteEntry[];
  /**
   * Spec 0's reference children, the lives the per-life values were learned
   * from. Absent in observations recorded before it: the reference compared
   * with is then spec 0's and was those lives.
   */
  readonly learnedFrom?: readonly ReferenceChild[];
}

/**
 * The live children after a fault against the reference's: paired by role,
 * compared in every field the operator manages (values generated once per
 * life masked, and judged as kept or written anew on the drift targets),
 * fields the contract declares volatile left out with a note each. Pure.
 */
export function compareAfterFault(
  live: readonly LiveChild[],
  reference: readonly ReferenceChild[],
  contract: Pick<Contract, "drift" | "clock" | "promises">,
  lives: FaultLives,
): { readonly comparison: EndStateComparison; readonly volatile: readonly string[] } {
  const comparison = compareEndStates(live, reference, contract.drift, {
    clockHorizonMs: contract.clock.horizonMs,
    ...(lives.roles ? { roles: lives.roles } : {}),
    writes: lives.writes,
    fields: "operator-managed",
    learnedFrom: lives.learnedFrom ?? reference,
  });
  const { compared, volatile } = withoutVolatile(comparison, contract);
  return { comparison: compared, volatile };
}

/**
 * The inconclusive verdict of an end state that otherwise matched, when
 * some of it cannot be told: fields that differ where the lives the
 * per-life values were learned from had no such field (a value generated
 * once per life there cannot be told from a wrong one), or children that
 * could not be paired (unpairedVerdict). Undefined when nothing is unsure. Pure.
 */
export function unsureAfterFault(comparison: EndStateComparison, evidence: Evidence): Judgement | undefined {
  if (comparison.unlearned.length > 0) {
    return {
      status: "inconclusive",
      message: `${comparison.unlearned.map((d) => `${d.object} ${d.path}`).join(", ")} differ from the reference, at fields the two fault-free lives of the sample never had: a value generated once per life there cannot be told from a wrong one`,
      evidence: { ...evidence, diffs: [...(evidence.diffs ?? []), ...comparison.unlearned] },
    };
  }
  return unpairedVerdict(comparison, evidence);
}

/**
 * The comparison without the differences in fields the contract declares
 * volatile for their object (a timestamp the operator rewrites on purpose
 * differs between any two lives), and a note for each left out. Pure.
 */
export function withoutVolatile(
  comparison: EndStateComparison,
  contract: Pick<Contract, "promises">,
): { readonly compared: EndStateComparison; readonly volatile: readonly string[] } {
  const notes: string[] = [];
  const volatileField = (diff: { object: string; path: string }): VolatileField | undefined => {
    const [kind = "", ...name] = diff.object.split("/");
    const fields = promisesFor(contract.promises, kind, name.join("/")).volatile;
    let path;
    try {
      path = parsePath(diff.path);
    } catch {
      return undefined;
    }
    return fields.find((f) => pathWithin(path, f.path));
  };
  const keep = (diffs: EndStateComparison["diffs"]) =>
    diffs.filter((diff) => {
      const field = volatileField(diff);
      if (field)
        notes.push(`not compared: ${diff.object} ${diff.path}, volatile: ${describeVolatile([field])}`);
      return field === undefined;
    });
  return {
    compared: {
      ...comparison,
      diffs: keep(comparison.diffs),
      undecided: keep(comparison.undecided),
      unlearned: keep(comparison.unlearned),
    },
    volatile: notes,
  };
}
