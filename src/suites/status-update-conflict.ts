import { isDeepStrictEqual } from "node:util";
import type { WriteEntry } from "../proxy/write-log.js";
import { writeEvidence } from "../runner/reference-state.js";
import { Inconclusive, type Scenario } from "../runner/scenario.js";
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
import { earlyReadyClaims, isStatusWrite, requiredChildWrites, statusClaim } from "./status-claims.js";
import { isRecord } from "../util/records.js";

export const statusUpdateConflict: CheckDefinition = {
  id: "conflict/status-update",
  level: "MUST",
  summary:
    "when the spec changes again just before the operator reports on the previous one, it never claims Ready for a generation whose children it has not written, and ends observing the newest generation",
};

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

/**
 * One scenario: the sample converges; the kit applies update 1 and arms its
 * own write of update 2 right before the operator's first status write that
 * claims Ready (by the contract's predicate) after it; with `quiet`
 * readiness, before its first status write. A status write with a
 * precondition then gets a real 409. Judged from the write log in order and
 * from the converged state.
 */
export async function statusUpdateOne(
  context: SuiteContext,
  reference: SpecReference,
): Promise<ScenarioResult> {
  const result = verdictFor(statusUpdateConflict, "status write for update 1", context.clock);
  const { contract } = context.deps;
  const [first, second] = contract.updates;
  if (!first || !second) throw new Error("conflict/status-update needs two updates");
  const statusWrites = reference.writes.filter(
    (w) => w.code >= 200 && w.code < 300 && isStatusWrite(w, contract.customResource),
  );
  if (statusWrites.length === 0) {
    return result(
      "skipped",
      "the operator wrote no status on its way to the reference: nothing to race with",
    );
  }
  const subresource = statusWrites.some((w) => w.subresource === "status") ? "status" : "";
  return inScenario(context, "conflict-status", result, async (scenario) => {
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
      return result(
        "inconclusive",
        readiness.kind === "quiet"
          ? "the operator converged on update 1 without a status write: nothing to race with"
          : "the operator converged on update 1 without a status write that claims Ready by the contract's predicate: nothing to race with",
        { writes: scenario.operatorWrites().map(writeEvidence) },
      );
    }
    if (outcome.status === "failed") {
      return result("inconclusive", `the concurrent update could not be made: ${outcome.error}`);
    }
    const { hit, kitWrite } = outcome.evidence;
    if (!kitWrite || kitWrite.code >= 300) {
      throw new Inconclusive(
        `the API server refused the contract's update 2 as the concurrent write (${kitWrite?.code ?? "no answer"})`,
      );
    }
    scenario.noteSpecWrite(2, kitWrite.seq, kitWrite.generation);

    await scenario.converge("convergence after the concurrent update");
    return await judge(context, scenario, { hit, kitWrite, second, reference, result });
  });
}

async function judge(
  context: SuiteContext,
  scenario: Scenario,
  input: {
    readonly hit: WriteEntry;
    readonly kitWrite: WriteEntry;
    readonly second: Readonly<Record<string, unknown>>;
    readonly reference: SpecReference;
    readonly result: ReturnType<typeof verdictFor>;
  },
): Promise<ScenarioResult> {
  const { hit, kitWrite, second, reference, result } = input;
  const { contract } = context.deps;
  const writes = scenario.operatorWrites();
  const final = await scenario.kit.get(scenario.customResource);
  const generation = final.metadata?.generation;
  const finalClaim = statusClaim(contract.readiness, final);
  const claimed = finalClaim.named ? finalClaim.generation : undefined;

  const { early, claims, unjudged } = earlyReadyClaims({
    writes,
    specWrites: scenario.specWrites,
    required: (spec) => requiredChildWrites(reference, spec, contract.customResource),
    readiness: contract.readiness,
    cr: contract.customResource,
  });
  const resubmits = resubmitsOf(scenario, hit, kitWrite, writes);
  const lost = mergePatchMismatches(final, second);
  const comparison = await compareWithReference(scenario, reference, contract);

  const notes = [
    `the kit wrote update 2 (write #${kitWrite.seq}, generation ${kitWrite.generation ?? "?"}) just before the operator's status ${hit.verb} #${hit.seq}, which ${hit.sentResourceVersion === undefined ? "carried no resourceVersion" : `carried resourceVersion ${hit.sentResourceVersion}`} and was answered ${hit.code}${hit.reason ? ` ${hit.reason}` : ""}`,
    `spec writes of this scenario: ${scenario.specWrites.map((w) => `spec ${w.spec} = generation ${w.generation ?? "?"} (#${w.seq})`).join(", ")}`,
    `${claims} status write(s) claimed Ready${unjudged > 0 ? `; ${unjudged} of them about no generation a spec write of this scenario produced, not judged for order` : ""}`,
  ];
  if (resubmits.excused.length > 0) notes.push(excusedNote(resubmits.excused));
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
    return result("failed", problems.join("; "), {
      ...evidence,
      operatorLog: await scenario.operator.logTail(10),
    });
  }
  const after = statusWrites.filter((w) => w.seq > hit.seq);
  return result(
    "passed",
    `the status write got ${hit.code === 409 ? "a real 409" : `answer ${hit.code}`}; ${after.length} later status write(s), none claiming Ready before the children of its spec (${[...requiredChildWrites(reference, 2, contract.customResource).keys()].join(", ") || "none needed"}) were written; ${claimed === undefined ? "" : `it observes generation ${claimed}, `}update 2 kept, end state as the reference of update 2`,
    evidence,
  );
}
