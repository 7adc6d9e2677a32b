import type { Contract } from "../../contract/load-contract.js";
import { sampleWithSpec, updateName } from "../../contract/spec-path.js";
import type { Evidence } from "../../report/report-model.js";
import { writeEvidence } from "../../scenario/reference-state.js";
import type { SpecReference } from "../../scenario/spec-references.js";
import type { Judgement, ObserveContext } from "../check.js";
import { describeMismatch, endStateMatches, unpairedVerdict } from "../shared/end-state.js";
import { compareObserved, endOf } from "./compare-ends.js";
import type { UpdateEqualsCreationObservation } from "./observation.js";

// Acto's recovery oracle, for a generated update the operator does not carry out (its reference
// never converges on it): the previous spec written back must bring it back to that spec's reference.

/**
 * The observation of a generated update its reference did not carry out:
 * the previous spec's reference beside where the operator came back to,
 * with no life of its own (nothing could be born at a spec the operator
 * does not converge on).
 */
export function recoveryObservation(
  context: ObserveContext,
  spec: number,
  name: string,
  reference: SpecReference,
  first: SpecReference,
): UpdateEqualsCreationObservation {
  const previousSpec = context.contract.updates.length;
  const previous = context.references.get(previousSpec);
  if (!previous || !reference.notCarriedOut) throw new Error(`no reference state of spec ${previousSpec}`);
  return {
    spec,
    updateName: name,
    bornWith: sampleWithSpec(context.contract, spec).spec,
    reference: { children: previous.children, customResource: endOf(previous.customResource) },
    learnedFrom: first.children,
    ...(reference.roles ? { roles: reference.roles } : {}),
    live: reference.children,
    customResource: endOf(reference.customResource),
    writes: reference.writes,
    convergedBy: [],
    operatorLog: [],
    notCarriedOut: {
      ...reference.notCarriedOut,
      previous: previousSpec === 0 ? "the sample" : updateName(context.contract, previousSpec),
    },
  };
}

/**
 * Acto's recovery oracle, for an update the operator did not carry out:
 * the previous spec written back must bring it back to that spec's
 * reference (the same children, managed fields and condition statuses).
 * Not carrying a made-up update out is no failure by itself (the schema may
 * allow what the operator rightly refuses); not coming back from it is.
 */
export function judgeRecovery(
  observation: UpdateEqualsCreationObservation,
  notCarriedOut: NonNullable<UpdateEqualsCreationObservation["notCarriedOut"]>,
  contract: Contract,
): Judgement {
  const update = observation.updateName ?? `update ${observation.spec}`;
  const didNot = `the operator did not carry ${update} out (${notCarriedOut.why})`;
  const notes = [
    `the reference wrote ${update} and never converged on it; the kit then wrote back the spec of ${notCarriedOut.previous} and compared where the operator came back to with the reference of ${notCarriedOut.previous}`,
    `born with (never created: the operator does not converge on it): ${JSON.stringify(observation.bornWith)}`,
  ];
  const writes = observation.writes.map(writeEvidence);
  if (notCarriedOut.notRecovered !== undefined) {
    return {
      status: "failed",
      message: `${didNot}, and with the spec of ${notCarriedOut.previous} written back it did not converge again: ${notCarriedOut.notRecovered}`,
      evidence: { writes, notes },
    };
  }
  const { compared, volatile, conditions } = compareObserved(observation, contract);
  const diffs = [...compared.diffs, ...conditions.diffs].map((d) => ({
    ...d,
    sides: { expected: `the reference of ${notCarriedOut.previous}`, actual: "come back to it" },
  }));
  const evidence: Evidence = {
    writes,
    notes: [...notes, ...volatile],
    ...(diffs.length > 0 ? { diffs } : {}),
  };
  if (!endStateMatches(compared) || conditions.diffs.length > 0) {
    return {
      status: "failed",
      message: `${didNot}, and with the spec of ${notCarriedOut.previous} written back it did not come back to that spec's reference: ${endStateMatches(compared) ? `${conditions.diffs.length} condition(s) with another status` : describeMismatch(compared)}`,
      evidence,
    };
  }
  const unsure = unpairedVerdict(compared, evidence);
  if (unsure) return unsure;
  return {
    status: "passed",
    message: `${didNot}: no update-equals-creation verdict on it; with the spec of ${notCarriedOut.previous} written back it came back to that spec's reference (${compared.children.length} child(ren) alike, the same condition statuses)`,
    evidence,
  };
}
