import { randomBytes } from "node:crypto";
import type { Contract } from "../../contract/load-contract.js";
import type { KubeObject } from "../../kube/kube-client.js";
import { CONCURRENT_WRITE_ANNOTATION } from "../../proxy/fault-actions.js";
import { expectedWrite, normalisedKey } from "../../proxy/faults.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import { childOfRole, writeKey, type ChildRoles } from "../../scenario/child-roles.js";
import { Inconclusive } from "../../scenario/scenario.js";
import {
  liveChildObjects,
  liveChildren,
  writeEvidence,
  type LiveChild,
} from "../../scenario/reference-state.js";
import type { ReferenceChild, SpecReference } from "../../scenario/spec-references.js";
import { defineCheck, type Judgement } from "../check.js";
import { compareEndStates, describeMismatch, endStateMatches, unpairedVerdict } from "../shared/end-state.js";
import { untilFaultActs } from "../shared/fault-wait.js";
import { excusedNote, judgeResubmits, resubmitInputs, type ResubmitInputs } from "../shared/resubmits.js";
import { childWritesOfSpec, type CustomResourceKind } from "../shared/status-claims.js";

/**
 * More conflicts than this on one object after the kit's single concurrent
 * write is a retry loop that does not learn: a correct operator needs one
 * (more only when the child's own controller writes it meanwhile).
 */
export const MAX_CONFLICTS = 10;

/**
 * The writes the contract's first update makes the reference write to an
 * existing child: its first effective update or patch of each child kind
 * after the kit's update (creates have nothing to race with; writes to the
 * custom resource are the status-update check's).
 */
export function childUpdateTargets(reference: SpecReference, cr: CustomResourceKind): WriteEntry[] {
  if (!reference.specWrites.some((w) => w.spec === 1)) return [];
  const targets = new Map<string, WriteEntry>();
  for (const entry of childWritesOfSpec(reference, 1, cr)) {
    if ((entry.verb !== "update" && entry.verb !== "patch") || entry.effect !== "changed") continue;
    const kind = `${entry.group}/${entry.resource}`;
    if (!targets.has(kind)) targets.set(kind, entry);
  }
  return [...targets.values()];
}

/** The concurrent write was made and the operator's write after it seen, then the scenario converged. */
export interface ChildUpdateRaced {
  readonly outcome: "reached";
  /** The child's name in this scenario. */
  readonly name: string;
  /** The value of the kit's annotation: it must survive. */
  readonly value: string;
  /** The operator's write the kit's write preceded. */
  readonly hit: WriteEntry;
  /** The kit's concurrent write and its answer. */
  readonly kitWrite?: WriteEntry;
  /** The operator's writes to the child (its main resource) from `hit` on, until converged. */
  readonly objectWrites: readonly WriteEntry[];
  /** What judgeResubmits needs of the read log about the child. */
  readonly resubmits: ResubmitInputs;
  /** The child once converged; absent when it is gone. */
  readonly live?: KubeObject;
  /** The children the operator created here that still exist, once converged. */
  readonly endState: readonly LiveChild[];
  /** The children of the reference of update 1, to compare the end state with. */
  readonly referenceChildren: readonly ReferenceChild[];
  /** Which child is which across lives (the reference's roles). */
  readonly roles?: ChildRoles;
  /** How each convergence of the scenario was decided (Scenario.convergedBy). */
  readonly convergedBy?: readonly string[];
  readonly operatorLog: readonly string[];
}

/** What one scenario saw: the race, or why there was none. */
export type ChildUpdateObservation =
  /** The operator converged on update 1 without the write the reference made. */
  | {
      readonly outcome: "not-reached";
      /** The reference's write raced with. */
      readonly target: WriteEntry;
      readonly name: string;
      /** The operator's writes of this scenario. */
      readonly writes: readonly WriteEntry[];
    }
  /** The kit's concurrent write could not be made. */
  | { readonly outcome: "failed"; readonly error: string }
  /** The operator's first write to the child after update 1 was not the reference's. */
  | {
      readonly outcome: "diverged";
      readonly target: WriteEntry;
      readonly name: string;
      readonly hit: WriteEntry;
    }
  | ChildUpdateRaced;

/**
 * One scenario per child kind the reference of update 1 updated: the sample
 * converges; the kit arms a concurrent write (a foreign annotation with a
 * fresh value) on the operator's first write to the target child after the
 * first update, and applies that update. A write with a precondition then
 * gets a real 409 from the API server; one without goes through on top of
 * the annotation. Judged once converged.
 */
/** A reference write to race with, and the key of its object's role (the same in every run). */
export type ChildUpdateTarget = WriteEntry & { readonly roleKey?: string };

export const childUpdate = defineCheck<ChildUpdateTarget, ChildUpdateObservation>({
  id: "conflict/child-update",
  level: "MUST",
  summary:
    "when another writer changes a child just before the operator's update of it, the operator re-reads, keeps that change and converges; it never resends the resourceVersion that conflicted",
  skip: (contract) =>
    contract.updates.length === 0
      ? { target: "contract", skip: "the contract has no update: nothing makes the operator write a child" }
      : undefined,
  references: () => [1],
  targets({ contract, references }) {
    const reference = references.get(1);
    const targets = reference ? childUpdateTargets(reference, contract.customResource) : [];
    return targets.length > 0
      ? targets.map((t) => ({ ...t, roleKey: writeKey(reference?.roles, t) }))
      : {
          target: "update 1",
          skip: "the reference updated no existing child for update 1: nothing to race with",
        };
  },
  targetName: (target) => `${target.roleKey ?? normalisedKey(target)} (${target.verb})`,
  observer: {
    scenario: "conflict-child",
    scenarioOf: (target) => `conflict-${target.resource}`,
    async observe(context, target) {
      context.progress(`a concurrent write before the operator's ${target.verb} of ${target.resource}`);
      const { contract } = context;
      const update = contract.updates[0];
      const reference = context.references.get(1);
      if (!update || !reference) throw new Error("conflict/child-update needs update 1 and its reference");
      const scenario = await context.open();
      await scenario.startWithSample();
      const cr = await scenario.converge("convergence of the sample");
      // The child's name in this scenario: the one of the same role as the reference's.
      const apiVersion = target.group ? `${target.group}/${target.version}` : target.version;
      const kind = await scenario.kit.kindOf(apiVersion, target.resource);
      const referenceUid = reference.customResource.metadata?.uid ?? "";
      const found = childOfRole(reference.roles, await liveChildren(scenario), kind, target.name ?? "");
      if (found === "ambiguous") {
        throw new Inconclusive(
          `more than one ${kind} here has the role of the reference's ${kind}/${target.name ?? ""}: which to race with cannot be told`,
        );
      }
      const name = found?.ref.name ?? (target.name ?? "").replaceAll(referenceUid, cr.metadata?.uid ?? "");
      const value = randomBytes(4).toString("hex");
      const fault = scenario.proxy.arm({
        kind: "mutate-before",
        match: {
          namespace: scenario.namespace,
          group: target.group,
          resource: target.resource,
          subresource: "",
          name,
          afterSeq: scenario.proxy.writeLog.lastSeq,
        },
        mutation: {
          kind: "patch",
          patchType: "merge",
          patch: { metadata: { annotations: { [CONCURRENT_WRITE_ANNOTATION]: value } } },
        },
        expect: { ...expectedWrite(target), name },
      });
      context.progress(`update 1 with a concurrent write on ${normalisedKey(target)}`);
      await scenario.applyUpdate(update, 1);
      const outcome = await untilFaultActs(context, scenario, () => fault.outcome(), "the concurrent write");
      if (outcome.status === "not-reached") {
        fault.disarm();
        return { outcome: "not-reached", target, name, writes: scenario.operatorWrites() };
      }
      if (outcome.status === "failed") return { outcome: "failed", error: outcome.error };
      const { hit, kitWrite } = outcome.evidence;
      if (outcome.status === "diverged") return { outcome: "diverged", target, name, hit };

      await scenario.converge("convergence after the conflict");
      const objectWrites = scenario
        .operatorWrites({ after: hit.seq - 1 })
        .filter(
          (w) => w.group === hit.group && w.resource === hit.resource && w.name === name && !w.subresource,
        );
      const resubmits = resubmitInputs(scenario, hit);
      const live = await scenario.kit.tryGet({ apiVersion, kind, name, namespace: scenario.namespace });
      return {
        outcome: "reached",
        name,
        value,
        hit,
        ...(kitWrite ? { kitWrite } : {}),
        objectWrites,
        resubmits,
        ...(live ? { live } : {}),
        endState: await liveChildObjects(scenario),
        referenceChildren: reference.children,
        ...(reference.roles ? { roles: reference.roles } : {}),
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
          message: `the operator converged on update 1 without writing ${observation.target.resource}/${observation.name}, which the reference updated: nothing to race with`,
          evidence: {
            writes: [writeEvidence(observation.target), ...observation.writes.map(writeEvidence)],
            notes: ["first write: the reference's; the rest: this scenario's"],
          },
        };
      case "failed":
        return {
          status: "inconclusive",
          message: `the concurrent write could not be made: ${observation.error}`,
        };
      case "diverged":
        return {
          status: "inconclusive",
          message: `the operator's first write to ${observation.target.resource}/${observation.name} after update 1 was not the reference's`,
          evidence: {
            writes: [writeEvidence(observation.target), writeEvidence(observation.hit)],
            notes: ["first write: the reference's; second: the one the concurrent write preceded here"],
          },
        };
      case "reached":
        return judgeRace(observation, contract);
    }
  },
});

/** The verdict on a race that happened: the resends, the annotation, the conflicts and the end state. */
function judgeRace(observation: ChildUpdateRaced, contract: Pick<Contract, "drift" | "clock">): Judgement {
  const { hit, kitWrite, name, value, objectWrites, live } = observation;
  const resubmits = kitWrite
    ? judgeResubmits({
        conflicted: hit,
        concurrent: kitWrite,
        later: objectWrites,
        delivered: observation.resubmits.delivered,
        watchesKind: observation.resubmits.watchesKind,
      })
    : { blamed: [], excused: [] };
  const conflicts = objectWrites.filter((w) => w.code === 409);
  const annotation = live?.metadata?.annotations?.[CONCURRENT_WRITE_ANNOTATION];
  const comparison = compareEndStates(observation.endState, observation.referenceChildren, contract.drift, {
    clockHorizonMs: contract.clock.horizonMs,
    // No writes: across spec updates a per-life value may change with the spec; only its role counts here.
    ...(observation.roles ? { roles: observation.roles } : {}),
  });

  const how =
    hit.sentResourceVersion === undefined
      ? `carried no resourceVersion (the proxy applied it on the state it read, after the kit's write${hit.proxyPrecondition ? `, in ${hit.proxyPrecondition.attempts} attempt(s)` : ""})`
      : `carried resourceVersion ${hit.sentResourceVersion}`;
  const notes = [
    // "update 1" also puts the annotation on the contract's updates[0], where the conflict was met.
    `while the operator converged update 1, the kit wrote ${CONCURRENT_WRITE_ANNOTATION}=${value} on ${hit.resource}/${name}${kitWrite ? ` (write #${kitWrite.seq}, answered ${kitWrite.code})` : ""} just before the operator's ${hit.verb} #${hit.seq}, which ${how} and was answered ${hit.code}${hit.reason ? ` ${hit.reason}` : ""}`,
  ];
  if (hit.sentResourceVersion === undefined) notes.push("no precondition writes");
  notes.push(...(observation.convergedBy ?? []).map((line) => `converged: ${line}`));
  if (resubmits.excused.length > 0) notes.push(excusedNote(resubmits.excused));
  notes.push(...comparison.clockMade);
  const evidence = {
    writes: [...(kitWrite ? [kitWrite] : []), ...objectWrites].map(writeEvidence),
    ...(comparison.diffs.length > 0 ? { diffs: comparison.diffs } : {}),
    notes,
  };

  const problems: string[] = [];
  if (resubmits.blamed.length > 0) {
    problems.push(
      `it resent resourceVersion ${hit.sentResourceVersion ?? ""}, which had just conflicted, ${resubmits.blamed.length} time(s) after its watch had delivered the concurrent change (write(s) ${resubmits.blamed.map((w) => `#${w.seq}`).join(", ")}): the retry reused the object it read before the conflict`,
    );
  }
  if (!live) problems.push(`${hit.resource}/${name} is gone`);
  else if (annotation !== value) {
    const after = objectWrites.filter((w) => w.code >= 200 && w.code < 300 && w.effect === "changed");
    problems.push(
      `the concurrent writer's annotation ${CONCURRENT_WRITE_ANNOTATION}=${value} is ${annotation === undefined ? "gone" : `now ${annotation}`}: erased by the operator's write(s) ${after.map((w) => `#${w.seq} (${w.verb})`).join(", ") || "after it"}`,
    );
  }
  if (conflicts.length > MAX_CONFLICTS) {
    problems.push(`${conflicts.length} conflicts on ${hit.resource}/${name} after one concurrent write`);
  }
  if (!endStateMatches(comparison))
    problems.push(`against the reference of update 1: ${describeMismatch(comparison)}`);
  if (problems.length > 0) {
    return {
      status: "failed",
      message: problems.join("; "),
      evidence: { ...evidence, operatorLog: observation.operatorLog },
    };
  }
  const unsure = unpairedVerdict(comparison, evidence);
  if (unsure) return unsure;
  const retries = objectWrites.length - 1;
  return {
    status: "passed",
    message:
      hit.sentResourceVersion === undefined
        ? `no precondition writes: the operator's ${hit.verb} went through on top of the concurrent change and kept its annotation; converged to the reference of update 1`
        : `the ${hit.verb} got ${hit.code === 409 ? "a real 409" : `answer ${hit.code}`}; the operator ${retries > 0 ? `wrote again ${retries} time(s) on a fresh read` : "did not write again"}, kept the concurrent writer's annotation and converged to the reference of update 1`,
    evidence,
  };
}
