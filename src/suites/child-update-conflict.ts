import { randomBytes } from "node:crypto";
import { CONCURRENT_WRITE_ANNOTATION } from "../proxy/fault-actions.js";
import { expectedWrite, normalisedKey } from "../proxy/faults.js";
import type { WriteEntry } from "../proxy/write-log.js";
import { writeEvidence } from "../runner/reference-state.js";
import type { Scenario } from "../runner/scenario.js";
import type { SpecReference } from "../runner/spec-references.js";
import {
  type CheckDefinition,
  type ScenarioResult,
  type SuiteContext,
  verdictFor,
  inScenario,
} from "./check.js";
import { compareWithReference, describeMismatch, endStateMatches } from "./end-state.js";
import { untilFaultActs } from "./fault-wait.js";
import { excusedNote, resubmitsOf } from "./resubmits.js";
import { childWritesOfSpec, type CustomResourceKind } from "./status-claims.js";

export const childUpdateConflict: CheckDefinition = {
  id: "conflict/child-update",
  level: "MUST",
  summary:
    "when another writer changes a child just before the operator's update of it, the operator re-reads, keeps that change and converges; it never resends the resourceVersion that conflicted",
};

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

/**
 * One scenario: the sample converges; the kit arms a concurrent write (a
 * foreign annotation with a fresh value) on the operator's first write to
 * the target child after the first update, and applies that update. A write
 * with a precondition then gets a real 409 from the API server; one without
 * goes through on top of the annotation. Judged once converged.
 */
export async function childUpdateOne(
  context: SuiteContext,
  target: WriteEntry,
  reference: SpecReference,
): Promise<ScenarioResult> {
  const result = verdictFor(childUpdateConflict, `${normalisedKey(target)} (${target.verb})`, context.clock);
  const { contract } = context.deps;
  const update = contract.updates[0];
  if (!update) return result("skipped", "the contract has no update");
  return inScenario(context, `conflict-${target.resource}`, result, async (scenario) => {
    await scenario.startWithSample();
    const cr = await scenario.converge("convergence of the sample");
    // The child's name in this scenario: the reference's with its custom resource's UID replaced.
    const referenceUid = reference.customResource.metadata?.uid ?? "";
    const name = (target.name ?? "").replaceAll(referenceUid, cr.metadata?.uid ?? "");
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
      expect: expectedWrite(target),
    });
    context.progress(`update 1 with a concurrent write on ${normalisedKey(target)}`);
    await scenario.applyUpdate(update, 1);
    const outcome = await untilFaultActs(context, scenario, () => fault.outcome(), "the concurrent write");
    if (outcome.status === "not-reached") {
      fault.disarm();
      return result(
        "inconclusive",
        `the operator converged on update 1 without writing ${target.resource}/${name}, which the reference updated: nothing to race with`,
        {
          writes: [writeEvidence(target), ...scenario.operatorWrites().map(writeEvidence)],
          notes: ["first write: the reference's; the rest: this scenario's"],
        },
      );
    }
    if (outcome.status === "failed") {
      return result("inconclusive", `the concurrent write could not be made: ${outcome.error}`);
    }
    const { hit, kitWrite } = outcome.evidence;
    if (outcome.status === "diverged") {
      return result(
        "inconclusive",
        `the operator's first write to ${target.resource}/${name} after update 1 was not the reference's`,
        {
          writes: [writeEvidence(target), writeEvidence(hit)],
          notes: ["first write: the reference's; second: the one the concurrent write preceded here"],
        },
      );
    }

    await scenario.converge("convergence after the conflict");
    return await judge(context, scenario, { hit, kitWrite, name, value, reference, result });
  });
}

async function judge(
  context: SuiteContext,
  scenario: Scenario,
  input: {
    readonly hit: WriteEntry;
    readonly kitWrite: WriteEntry | undefined;
    readonly name: string;
    readonly value: string;
    readonly reference: SpecReference;
    readonly result: ReturnType<typeof verdictFor>;
  },
): Promise<ScenarioResult> {
  const { hit, kitWrite, name, value, reference, result } = input;
  const sameObject = (w: WriteEntry) =>
    w.group === hit.group && w.resource === hit.resource && w.name === name && !w.subresource;
  const objectWrites = scenario.operatorWrites({ after: hit.seq - 1 }).filter(sameObject);
  const resubmits = kitWrite
    ? resubmitsOf(scenario, hit, kitWrite, objectWrites)
    : { blamed: [], excused: [] };
  const conflicts = objectWrites.filter((w) => w.code === 409);

  const apiVersion = hit.group ? `${hit.group}/${hit.version}` : hit.version;
  const kind = await scenario.kit.kindOf(apiVersion, hit.resource);
  const live = await scenario.kit.tryGet({ apiVersion, kind, name, namespace: scenario.namespace });
  const annotation = live?.metadata?.annotations?.[CONCURRENT_WRITE_ANNOTATION];
  const comparison = await compareWithReference(scenario, reference, context.deps.contract);

  const how =
    hit.sentResourceVersion === undefined
      ? `carried no resourceVersion (the proxy applied it on the state it read, after the kit's write${hit.proxyPrecondition ? `, in ${hit.proxyPrecondition.attempts} attempt(s)` : ""})`
      : `carried resourceVersion ${hit.sentResourceVersion}`;
  const notes = [
    `the kit wrote ${CONCURRENT_WRITE_ANNOTATION}=${value} on ${hit.resource}/${name}${kitWrite ? ` (write #${kitWrite.seq}, answered ${kitWrite.code})` : ""} just before the operator's ${hit.verb} #${hit.seq}, which ${how} and was answered ${hit.code}${hit.reason ? ` ${hit.reason}` : ""}`,
  ];
  if (hit.sentResourceVersion === undefined) notes.push("no precondition writes");
  if (resubmits.excused.length > 0) notes.push(excusedNote(resubmits.excused));
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
    return result("failed", problems.join("; "), {
      ...evidence,
      operatorLog: await scenario.operator.logTail(10),
    });
  }
  const retries = objectWrites.length - 1;
  return result(
    "passed",
    hit.sentResourceVersion === undefined
      ? `no precondition writes: the operator's ${hit.verb} went through on top of the concurrent change and kept its annotation; converged to the reference of update 1`
      : `the ${hit.verb} got ${hit.code === 409 ? "a real 409" : `answer ${hit.code}`}; the operator ${retries > 0 ? `wrote again ${retries} time(s) on a fresh read` : "did not write again"}, kept the concurrent writer's annotation and converged to the reference of update 1`,
    evidence,
  );
}
