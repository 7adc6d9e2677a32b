import { isDeepStrictEqual } from "node:util";
import type { Contract } from "../../contract/load-contract.js";
import type { KubeObject } from "../../kube/kube-client.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import { liveChildObjects, writeEvidence, type LiveChild } from "../../scenario/reference-state.js";
import { Inconclusive, type SpecWrite } from "../../scenario/scenario.js";
import type { ReferenceChild, SpecReference } from "../../scenario/spec-references.js";
import { isRecord } from "../../util/records.js";
import { defineCheck, type Judgement } from "../check.js";
import type { ChildRoles } from "../../scenario/child-roles.js";
import { compareEndStates, describeMismatch, endStateMatches, unpairedVerdict } from "../shared/end-state.js";
import { untilFaultActs } from "../shared/fault-wait.js";
import { excusedNote, judgeResubmits, resubmitInputs, type ResubmitInputs } from "../shared/resubmits.js";
import {
  earlyReadyClaims,
  isStatusWrite,
  requiredChildWrites,
  statusClaim,
} from "../shared/status-claims.js";

/**
 * Where a merge patch does not hold on an object: the paths whose value
 * differs from the patch's (null: the key must be absent). Objects are
 * compared key by key, everything else whole. Pure.
 */
export function mergePatchMismatches(object: unknown, patch: unknown, path = ""): string[] {
  if (!isRecord(patch)) return isDeepStrictEqual(object, patch) ? [] : [path || "(whole object)"];
  const target = isRecord(object) ? object : {};
  return Object.entries(patch).flatMap(([key, value]) => {
    const at = path ? `${path}.${key}` : key;
    if (value === null) return key in target ? [at] : [];
    return mergePatchMismatches(target[key], value, at);
  });
}

/** The operator's successful status writes on its way to a reference. */
function referenceStatusWrites(reference: SpecReference, contract: Contract): WriteEntry[] {
  return reference.writes.filter(
    (w) => w.code >= 200 && w.code < 300 && isStatusWrite(w, contract.customResource),
  );
}

/** The kit's update 2 was written right before the operator's status write, then the scenario converged. */
export interface StatusUpdateRaced {
  readonly outcome: "reached";
  /** The operator's status write the kit's update 2 preceded. */
  readonly hit: WriteEntry;
  /** The kit's write of update 2, accepted. */
  readonly kitWrite: WriteEntry;
  /** The contract's update 2, as the kit wrote it: it must survive. */
  readonly update: Readonly<Record<string, unknown>>;
  /** Every operator write of this scenario, until converged. */
  readonly writes: readonly WriteEntry[];
  /** The kit's writes that set a spec in this scenario (update 2 included). */
  readonly specWrites: readonly SpecWrite[];
  /** The custom resource once converged. */
  readonly final: KubeObject;
  /** What judgeResubmits needs of the read log about the custom resource. */
  readonly resubmits: ResubmitInputs;
  /** The children the operator created here that still exist, once converged. */
  /** How each convergence of the scenario was decided (Scenario.convergedBy). */
  readonly convergedBy?: readonly string[];
  readonly endState: readonly LiveChild[];
  /** What the judge needs of the reference of update 2: its writes in order, its spec writes, its children. */
  readonly reference: {
    /** The namespace it was computed in: what the operator wrote elsewhere is not this life's. */
    readonly namespace: string;
    readonly writes: readonly WriteEntry[];
    readonly specWrites: readonly SpecWrite[];
    readonly children: readonly ReferenceChild[];
    /** Which child is which across lives. */
    readonly roles?: ChildRoles;
  };
  readonly operatorLog: readonly string[];
}

/** What the scenario saw: the race, or why there was none. */
export type StatusUpdateObservation =
  /** The operator converged on update 1 without the status write the fault waited for. */
  | { readonly outcome: "not-reached"; readonly writes: readonly WriteEntry[] }
  /** The kit's concurrent update could not be made. */
  | { readonly outcome: "failed"; readonly error: string }
  | StatusUpdateRaced;

/**
 * One scenario: the sample converges; the kit applies update 1 and arms its
 * own write of update 2 right before the operator's first status write that
 * claims Ready (by the contract's predicate) after it; with `quiet`
 * readiness, before its first status write. A status write with a
 * precondition then gets a real 409. Judged from the write log in order and
 * from the converged state. Its one target is the reference of update 2.
 */
export const statusUpdate = defineCheck<SpecReference, StatusUpdateObservation>({
  id: "conflict/status-update",
  level: "MUST",
  summary:
    "when the spec changes again just before the operator reports on the previous one, it never claims Ready for a generation whose children it has not written, and ends observing the newest generation",
  skip: (contract) =>
    contract.updates.length < 2
      ? {
          target: "contract",
          skip: `the contract has ${contract.updates.length} update(s); this check needs two: the second races with the status write for the first`,
        }
      : undefined,
  references: () => [2],
  targets: ({ references }) => {
    const reference = references.get(2);
    return reference ? [reference] : [];
  },
  targetName: () => "status write for update 1",
  skipTarget: (reference, { contract }) =>
    referenceStatusWrites(reference, contract).length === 0
      ? "the operator wrote no status on its way to the reference: nothing to race with"
      : undefined,
  observer: {
    scenario: "conflict-status",
    async observe(context, reference) {
      const { contract } = context;
      const [first, second] = contract.updates;
      if (!first || !second) throw new Error("conflict/status-update needs two updates");
      const subresource = referenceStatusWrites(reference, contract).some((w) => w.subresource === "status")
        ? "status"
        : "";
      const scenario = await context.open();
      await scenario.startWithSample();
      await scenario.converge("convergence of the sample");
      const cr = scenario.customResource;
      const sampleGeneration = scenario.specWrites[0]?.generation;
      const { readiness } = contract;
      const fault = scenario.proxy.arm({
        kind: "mutate-before",
        match: {
          namespace: scenario.namespace,
          group: contract.customResource.group,
          resource: contract.customResource.resource,
          subresource,
          name: cr.name,
          afterSeq: scenario.proxy.writeLog.lastSeq,
        },
        mutation: { kind: "patch", patchType: "merge", patch: second },
        target: {
          group: contract.customResource.group,
          version: contract.customResource.version,
          resource: contract.customResource.resource,
          namespace: scenario.namespace,
          name: cr.name,
        },
        // A Ready claim about update 1, not one still about the sample's generation.
        ...(readiness.kind === "quiet"
          ? {}
          : {
              when: (body: unknown) => {
                if (body === undefined) return false;
                const claim = statusClaim(readiness, body);
                return claim.ready && claim.generation !== sampleGeneration;
              },
            }),
      });
      context.progress("update 1, and update 2 just before the status write that reports on it");
      await scenario.applyUpdate(first, 1);
      const outcome = await untilFaultActs(context, scenario, () => fault.outcome(), "the concurrent update");
      if (outcome.status === "not-reached") {
        fault.disarm();
        return { outcome: "not-reached", writes: scenario.operatorWrites() };
      }
      if (outcome.status === "failed") return { outcome: "failed", error: outcome.error };
      const { hit, kitWrite } = outcome.evidence;
      if (!kitWrite || kitWrite.code >= 300) {
        throw new Inconclusive(
          `the API server refused the contract's update 2 as the concurrent write (${kitWrite?.code ?? "no answer"})`,
        );
      }
      scenario.noteSpecWrite(2, kitWrite.seq, kitWrite.generation);

      await scenario.converge("convergence after the concurrent update");
      return {
        outcome: "reached",
        hit,
        kitWrite,
        update: second,
        writes: scenario.operatorWrites(),
        specWrites: [...scenario.specWrites],
        final: await scenario.kit.get(scenario.customResource),
        resubmits: resubmitInputs(scenario, hit),
        endState: await liveChildObjects(scenario),
        reference: {
          namespace: reference.namespace,
          writes: reference.writes,
          specWrites: reference.specWrites,
          children: reference.children,
          ...(reference.roles ? { roles: reference.roles } : {}),
        },
        convergedBy: [...scenario.convergedBy],
        operatorLog: await scenario.operatorLog(10),
      };
    },
  },
  judge(observation, contract): Judgement {
    switch (observation.outcome) {
      case "not-reached":
        return {
          status: "inconclusive",
          message:
            contract.readiness.kind === "quiet"
              ? "the operator converged on update 1 without a status write: nothing to race with"
              : "the operator converged on update 1 without a status write that claims Ready by the contract's predicate: nothing to race with",
          evidence: { writes: observation.writes.map(writeEvidence) },
        };
      case "failed":
        return {
          status: "inconclusive",
          message: `the concurrent update could not be made: ${observation.error}`,
        };
      case "reached":
        return judgeRace(observation, contract);
    }
  },
});

/** The verdict on a race that happened: early Ready claims, the final generation, resends, update 2 and the end state. */
function judgeRace(observation: StatusUpdateRaced, contract: Contract): Judgement {
  const { hit, kitWrite, writes, specWrites, final, reference } = observation;
  const generation = final.metadata?.generation;
  const finalClaim = statusClaim(contract.readiness, final);
  const claimed = finalClaim.named ? finalClaim.generation : undefined;

  const { early, claims, unjudged } = earlyReadyClaims({
    writes,
    specWrites,
    required: (spec) => requiredChildWrites(reference, spec, contract.customResource),
    readiness: contract.readiness,
    cr: contract.customResource,
    ...(reference.roles ? { roles: reference.roles } : {}),
  });
  const resubmits = judgeResubmits({
    conflicted: hit,
    concurrent: kitWrite,
    later: writes,
    delivered: observation.resubmits.delivered,
    watchesKind: observation.resubmits.watchesKind,
  });
  const lost = mergePatchMismatches(final, observation.update);
  const comparison = compareEndStates(observation.endState, reference.children, contract.drift, {
    clockHorizonMs: contract.clock.horizonMs,
    // No writes: across spec updates a per-life value may change with the spec; only its role counts here.
    ...(reference.roles ? { roles: reference.roles } : {}),
  });

  const notes = [
    `the kit wrote update 2 (write #${kitWrite.seq}, generation ${kitWrite.generation ?? "?"}) just before the operator's status ${hit.verb} #${hit.seq}, which ${hit.sentResourceVersion === undefined ? "carried no resourceVersion" : `carried resourceVersion ${hit.sentResourceVersion}`} and was answered ${hit.code}${hit.reason ? ` ${hit.reason}` : ""}`,
    `spec writes of this scenario: ${specWrites.map((w) => `spec ${w.spec} = generation ${w.generation ?? "?"} (#${w.seq})`).join(", ")}`,
    `${claims} status write(s) claimed Ready${unjudged > 0 ? `; ${unjudged} of them about no generation a spec write of this scenario produced, not judged for order` : ""}`,
  ];
  if (resubmits.excused.length > 0) notes.push(excusedNote(resubmits.excused));
  notes.push(...(observation.convergedBy ?? []).map((line) => `converged: ${line}`));
  notes.push(...comparison.clockMade);
  if (claimed === undefined) {
    notes.push(
      "the status names no observedGeneration: a status write's generation is read from the object it sent (metadata.generation), and the final observedGeneration is not judged",
    );
  }
  const statusWrites = writes.filter((w) => isStatusWrite(w, contract.customResource));
  const evidence = {
    writes: [kitWrite, ...writes.filter((w) => w.seq >= hit.seq - 20)]
      .sort((a, b) => a.seq - b.seq)
      .map(writeEvidence),
    ...(comparison.diffs.length > 0 ? { diffs: comparison.diffs } : {}),
    notes,
  };

  const problems: string[] = [];
  for (const claim of early) {
    problems.push(
      `status write #${claim.claim.seq} claimed Ready for generation ${claim.generation} (spec ${claim.spec}) before the operator wrote ${claim.missing.join(", ")}, which that spec needs`,
    );
  }
  if (claimed !== undefined && claimed !== generation) {
    problems.push(
      `the final status observes generation ${claimed}, the custom resource is at ${generation ?? "?"}`,
    );
  }
  if (resubmits.blamed.length > 0) {
    problems.push(
      `it resent resourceVersion ${hit.sentResourceVersion ?? ""}, which had just conflicted, after its watch had delivered the concurrent update, in status write(s) ${resubmits.blamed.map((w) => `#${w.seq}`).join(", ")}`,
    );
  }
  if (lost.length > 0) {
    problems.push(`the concurrent update 2 did not survive: ${lost.join(", ")} no longer as it set them`);
  }
  if (!endStateMatches(comparison))
    problems.push(`against the reference of update 2: ${describeMismatch(comparison)}`);
  if (problems.length > 0) {
    return {
      status: "failed",
      message: problems.join("; "),
      evidence: { ...evidence, operatorLog: observation.operatorLog },
    };
  }
  const unsure = unpairedVerdict(comparison, evidence);
  if (unsure) return unsure;
  const after = statusWrites.filter((w) => w.seq > hit.seq);
  return {
    status: "passed",
    message: `the status write got ${hit.code === 409 ? "a real 409" : `answer ${hit.code}`}; ${after.length} later status write(s), none claiming Ready before the children of its spec (${[...requiredChildWrites(reference, 2, contract.customResource).keys()].join(", ") || "none needed"}) were written; ${claimed === undefined ? "" : `it observes generation ${claimed}, `}update 2 kept, end state as the reference of update 2`,
    evidence,
  };
}
