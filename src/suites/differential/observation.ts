import type { WriteEntry } from "../../proxy/write-log.js";
import type { ChildRoles } from "../../scenario/child-roles.js";
import type { LiveChild } from "../../scenario/reference-state.js";
import type { ReferenceChild, SpecReference } from "../../scenario/spec-references.js";
import type { CustomResourceEnd } from "./compare-ends.js";

// What differential/update-equals-creation records of one scenario, as its judge and the
// recovery oracle (recovery.ts) read it.

/** A custom resource born with the spec of update `spec`, converged, beside the reference of that spec. */
export interface UpdateEqualsCreationObservation {
  readonly spec: number;
  /** How messages name the update (absent in observations recorded before generated updates: "update <spec>"). */
  readonly updateName?: string;
  /** The spec the custom resource was created with: the sample's, with updates 1..spec merged in. */
  readonly bornWith: unknown;
  /** The reference of spec `spec`: the sample created, then updated to it, each step converged. */
  readonly reference: {
    readonly children: readonly ReferenceChild[];
    readonly customResource: CustomResourceEnd;
  };
  /** The spec-0 reference's children: the lives the roles and per-life values were learned from. */
  readonly learnedFrom: readonly ReferenceChild[];
  readonly roles?: ChildRoles;
  /** The operator's children here, once converged. */
  readonly live: readonly LiveChild[];
  readonly customResource: CustomResourceEnd;
  /** The operator's writes in this scenario. */
  readonly writes: readonly WriteEntry[];
  /** How the convergence was decided (Scenario.convergedBy). */
  readonly convergedBy: readonly string[];
  readonly operatorLog: readonly string[];
  /**
   * A generated update the operator did not carry out (its reference never
   * converged on it): then `reference` is the previous spec's reference and
   * `live` where the operator came back to once the kit wrote that spec back
   * (the recovery oracle); no custom resource was born with the update.
   */
  readonly notCarriedOut?: NonNullable<SpecReference["notCarriedOut"]> & { readonly previous: string };
  /**
   * A generated update only: the custom resource born with its spec never
   * converged (why): the operator does not carry that spec out from a
   * creation, so there is nothing to compare the updated one with.
   */
  readonly bornNeverConverged?: string;
}
