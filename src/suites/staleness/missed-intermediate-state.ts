import type { WatchFaultProof } from "../../proxy/watch-faults.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import { liveChildObjects, writeEvidence, type LiveChild } from "../../scenario/reference-state.js";
import type { ReferenceChild } from "../../scenario/spec-references.js";
import { defineCheck, type Judgement } from "../check.js";
import type { ChildRoles } from "../../scenario/child-roles.js";
import { compareAfterFault, unsureAfterFault } from "../shared/after-fault.js";
import { describeMismatch, endStateMatches } from "../shared/end-state.js";
import { untilNothingLeft } from "../shared/fault-wait.js";
import { heldList, specReference } from "./stale-views.js";

/** What the coalescing fault did, and where the operator ended once it had. */
export type MissedIntermediateStateObservation =
  /** The fault took too few events to hide a state (coalescedEnough): the scenario stopped at the release. */
  | { readonly stage: "coalesced"; readonly released: WatchFaultProof }
  | {
      readonly stage: "converged";
      readonly released: WatchFaultProof;
      /** The children of the reference of the final spec. */
      readonly reference: readonly ReferenceChild[];
      /** Which child is which across lives (the reference's roles). */
      readonly roles?: ChildRoles;
      /** Spec 0's reference children, the lives the per-life values were learned from. */
      readonly learnedFrom?: readonly ReferenceChild[];
      /** How each convergence of the scenario was decided (Scenario.convergedBy). */
      readonly convergedBy?: readonly string[];
      /** The operator's children after the convergence to the final spec. */
      readonly live: readonly LiveChild[];
      /** The operator's writes after the first update. */
      readonly writes: readonly WriteEntry[];
      readonly operatorLog: readonly string[];
    };

/**
 * Whether the coalescing fault hid an intermediate state: it took two
 * events or more and delivered fewer than it took. Pure.
 */
export function coalescedEnough(proof: WatchFaultProof): boolean {
  return proof.taken.length >= 2 && proof.delivered.length < proof.taken.length;
}

/**
 * After the sample converged, the custom resource's events are coalesced
 * while the contract's updates are applied one after another, so the
 * operator's informer goes from the first spec to the last in one event, as
 * one that missed the ones between would. Level-triggered reconciliation
 * reaches the reference of the final spec.
 */
export const missedIntermediateState = defineCheck<string, MissedIntermediateStateObservation>({
  id: "staleness/missed-intermediate-state",
  level: "MUST",
  summary:
    "when its watch delivers only the custom resource's last state after several spec updates, it converges to the reference of the final spec",
  references: (contract) => [0, contract.updates.length],
  // One update leaves nothing between the sample and the final spec to miss: coalescing its one
  // event hides nothing, and the scenario could only end inconclusive.
  skip: (contract) =>
    contract.updates.length < 2
      ? {
          target: "updates",
          skip:
            contract.updates.length === 0
              ? "the contract has no updates: there is no intermediate state to miss"
              : "the contract has one update: an intermediate state to miss needs two (add a second to `updates`)",
        }
      : undefined,
  targets: ({ contract }) => [`updates 1-${contract.updates.length}`],
  targetName: (target) => target,
  observer: {
    scenario: "missed-intermediate",
    async observe(context) {
      const { updates, customResource } = context.contract;
      const reference = specReference(context, updates.length);
      const scenario = await context.open();
      await scenario.startWithSample();
      await scenario.converge();
      const cr = scenario.customResource;
      const coalesce = scenario.proxy.armWatch({
        mode: "coalesce",
        group: customResource.group,
        resource: customResource.resource,
        match: { namespace: cr.namespace, name: cr.name },
      });
      let released: WatchFaultProof | undefined;
      try {
        let last: string | undefined;
        for (const [index, update] of updates.entries()) {
          last = (await scenario.applyUpdate(update, index + 1)).metadata?.resourceVersion;
        }
        // Every update's event must have reached the fault before it is released, or some pass it.
        await untilNothingLeft(context, scenario, "arrival of the last update at the coalescing fault", () =>
          Promise.resolve(
            coalesce.held().some((e) => e.resourceVersion === last)
              ? []
              : [`the event of resourceVersion ${last}`],
          ),
        );
        released = coalesce.release();
        if (!coalescedEnough(released)) return { stage: "coalesced", released };
        await scenario.converge(`convergence to update ${updates.length}`);
        const live = await liveChildObjects(scenario);
        return {
          stage: "converged",
          released,
          reference: reference.children,
          ...(reference.roles ? { roles: reference.roles } : {}),
          learnedFrom: specReference(context, 0).children,
          live,
          writes: scenario.operatorWrites({ after: scenario.specWrites[1]?.seq ?? 0 }),
          convergedBy: [...scenario.convergedBy],
          operatorLog: await scenario.operatorLog(10),
        };
      } finally {
        if (!released) coalesce.release();
      }
    },
  },
  judge(observation, contract): Judgement {
    const { released } = observation;
    const updates = contract.updates.length;
    const proof = [
      `coalesced the custom resource's events on ${released.streams} watch stream(s): took ${released.taken.length} (${heldList(released.taken)}), delivered ${released.delivered.length} (${heldList(released.delivered)})`,
    ];
    if (observation.stage === "coalesced" || !coalescedEnough(released)) {
      return {
        status: "inconclusive",
        message: "the coalescing fault took too few events to hide an intermediate state",
        evidence: { notes: proof },
      };
    }
    // No writes: across spec updates a per-life value may change with the spec; only its role counts here.
    const { comparison, volatile } = compareAfterFault(observation.live, observation.reference, contract, {
      ...(observation.roles ? { roles: observation.roles } : {}),
      writes: [],
      ...(observation.learnedFrom ? { learnedFrom: observation.learnedFrom } : {}),
    });
    const evidence = {
      writes: observation.writes.map(writeEvidence),
      ...(comparison.diffs.length > 0 ? { diffs: comparison.diffs } : {}),
      notes: [
        ...proof,
        ...(observation.convergedBy ?? []).map((line) => `converged: ${line}`),
        ...volatile,
        ...comparison.clockMade,
      ],
    };
    if (!endStateMatches(comparison)) {
      return {
        status: "failed",
        message: `after seeing only the last of ${updates} spec updates, it ended unlike the reference of update ${updates}: ${describeMismatch(comparison)}`,
        evidence: { ...evidence, operatorLog: observation.operatorLog },
      };
    }
    const unsure = unsureAfterFault(comparison, evidence);
    if (unsure) return unsure;
    return {
      status: "passed",
      message: `seeing only the last of ${updates} spec updates, it converged to the reference of update ${updates}`,
      evidence,
    };
  },
});
