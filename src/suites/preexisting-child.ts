import { isDeepStrictEqual } from "node:util";
import { evaluateReadiness, type Readiness } from "../contract/readiness.js";
import { describeError } from "../errors.js";
import type { KubeObject } from "../kube/kube-client.js";
import { normalisedName, withoutUids } from "../proxy/faults.js";
import type { WriteEntry } from "../proxy/write-log.js";
import type { Evidence } from "../report/report-model.js";
import { writeEvidence } from "../runner/reference-state.js";
import { Inconclusive } from "../runner/scenario.js";
import type { ReferenceChild } from "../runner/spec-references.js";
import { pollUntil, PollTimeoutError } from "../util/poll.js";
import {
  verdictFor,
  type CheckDefinition,
  type ScenarioResult,
  type SuiteContext,
  inScenario,
} from "./check.js";
import { GIVE_UP_IDLE_MS } from "./drift.js";
import { driftTargets, formatPath, valueAt, type DriftTarget } from "./drift-targets.js";
import { isStatusWrite, statusClaim, type CustomResourceKind } from "./status-claims.js";

export const preexistingChild: CheckDefinition = {
  id: "idempotency/preexisting-child",
  level: "MUST",
  summary:
    "a child that exists before its custom resource (the reference's name, other values, no owner) is never reported Ready while it differs",
};

/** Fields the API server allocates: a copy of another namespace's object must not carry them. */
const ALLOCATED: readonly (readonly (string | number)[])[] = [
  ["spec", "clusterIP"],
  ["spec", "clusterIPs"],
  ["spec", "nodeName"],
  ["spec", "volumeName"],
];

/**
 * The object the kit creates before the custom resource exists: the
 * reference's child under the same name, without owner or server-set
 * metadata, with every drift target of it set to its perturbed value.
 * Undefined when nothing of it can be made different.
 */
export function foreignCopy(
  child: ReferenceChild,
  namespace: string,
  targets: readonly DriftTarget[],
): KubeObject | undefined {
  if (targets.length === 0) return undefined;
  const copy = structuredClone(child.object) as KubeObject & { status?: unknown; spec?: unknown };
  const { name, labels, annotations } = copy.metadata ?? {};
  copy.metadata = { name, namespace, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) };
  delete copy.status;
  for (const path of ALLOCATED) removeAt(copy, path);
  for (const port of asArray(valueAt(copy, ["spec", "ports"])))
    delete (port as { nodePort?: unknown }).nodePort;
  for (const target of targets) setAt(copy, target.path, target.perturbed);
  return copy;
}

/**
 * One scenario per child of the reference whose name is known before the
 * custom resource exists: the kit creates that child with other values and
 * no owner, then starts the operator and creates the sample. While the kit
 * watches (until the operator is ready and quiet, or has given up), the
 * custom resource must never be ready while the child still differs from
 * the reference: fixing the child first, or staying not ready (refusing a
 * child it does not own), both pass.
 */
export async function preexistingOne(context: SuiteContext, child: ReferenceChild): Promise<ScenarioResult> {
  const target = `${child.ref.kind}/${normalisedName(child.ref)}`;
  const result = verdictFor(preexistingChild, target, context.clock);
  const { contract } = context.deps;
  if (contract.readiness.kind === "quiet") {
    return result(
      "skipped",
      "the contract's readiness is `quiet`: the custom resource reports no readiness to judge",
    );
  }
  if (!child.ref.namespace)
    return result("skipped", "a cluster-scoped child is shared by every namespace's scenarios");
  if (normalisedName(child.ref) !== child.ref.name) {
    return result(
      "skipped",
      "its name derives from the custom resource's UID, unknown before the custom resource exists",
    );
  }
  const targets = driftTargets({ kind: child.ref.kind, object: child.object }, contract.drift);
  return inScenario(context, "preexisting", result, async (scenario) => {
    const copy = foreignCopy(child, scenario.namespace, targets);
    if (!copy) return result("skipped", "no field of it the operator manages to set otherwise");
    try {
      await scenario.kit.create(copy);
    } catch (error) {
      throw new Inconclusive(`the API server refused the pre-existing ${target}: ${describeError(error)}`);
    }
    const ref = { ...child.ref, namespace: scenario.namespace };
    const differences = (live: KubeObject | undefined): NonNullable<Evidence["diffs"]> =>
      targets
        .filter((t) => !isDeepStrictEqual(withoutUids(valueAt(live, t.path)), withoutUids(t.value)))
        .map((t) => ({
          object: target,
          path: formatPath(t.path),
          expected: t.value,
          actual: valueAt(live, t.path),
        }));

    context.progress(
      `${target} exists before the custom resource, with ${targets.length} field(s) set otherwise`,
    );
    await scenario.startWithSample();
    const startedAt = context.clock.now();
    let readyWhileDiffering:
      | { readonly at: number; readonly diffs: NonNullable<Evidence["diffs"]>; readonly reason: string }
      | undefined;
    let last: { ready: boolean; reason: string; diffs: NonNullable<Evidence["diffs"]> } | undefined;
    try {
      await pollUntil(
        async () => {
          const cr = await context.deps.kube.tryGet(scenario?.customResource ?? child.ref);
          const readiness = evaluateReadiness(contract.readiness, cr);
          const diffs = differences(await context.deps.kube.tryGet(ref));
          last = { ready: readiness.ready, reason: readiness.reason, diffs };
          if (readiness.ready && diffs.length > 0 && !readyWhileDiffering) {
            readyWhileDiffering = { at: context.clock.now() - startedAt, diffs, reason: readiness.reason };
          }
          const idle = scenario?.proxy.operatorIdleMs ?? 0;
          if (readiness.ready && diffs.length === 0 && idle >= contract.quietPeriodMs)
            return { done: true, value: undefined };
          if (readyWhileDiffering && idle >= contract.quietPeriodMs) return { done: true, value: undefined };
          if (idle >= GIVE_UP_IDLE_MS && context.clock.now() - startedAt >= GIVE_UP_IDLE_MS) {
            return { done: true, value: undefined };
          }
          return { done: false, reason: `${readiness.reason}; ${diffs.length} field(s) differ` };
        },
        {
          description: `the operator to settle with a pre-existing ${target}`,
          timeoutMs: contract.timeouts.convergeMs,
          intervalMs: 100,
          signal: context.deps.signal,
        },
      );
    } catch (error) {
      // Still writing at the deadline: judged on what was seen, like a settled operator.
      if (!(error instanceof PollTimeoutError)) throw error;
    }
    const evidence: Evidence = {
      writes: scenario.operatorWrites().map(writeEvidence),
      notes: [
        `pre-existing ${target} created by the kit with: ${targets.map((t) => `${formatPath(t.path)}=${JSON.stringify(t.perturbed)}`).join(", ")}`,
      ],
    };
    if (readyWhileDiffering) {
      return result(
        "failed",
        `ready (${readyWhileDiffering.reason}) ${(readyWhileDiffering.at / 1000).toFixed(1)} s after the sample was created, while ${readyWhileDiffering.diffs.length} field(s) of the pre-existing child still differed from the reference`,
        { ...evidence, diffs: readyWhileDiffering.diffs, operatorLog: await scenario.operator.logTail(10) },
      );
    }
    // The polls see states 100 ms apart; the write log sees every claim, in order.
    const claim = readyClaimBeforeRepair(
      scenario.operatorWrites(),
      contract.readiness,
      contract.customResource,
      { group: child.group, resource: child.resource, name: child.ref.name },
    );
    if (claim) {
      return result(
        "failed",
        `status write #${claim.seq} claimed Ready before the operator's first write to the pre-existing child, which was then still the kit's copy (${targets.length} field(s) differing from the reference)`,
        { ...evidence, operatorLog: await scenario.operator.logTail(10) },
      );
    }
    if (last?.ready)
      return result("passed", "it fixed the pre-existing child before it reported ready", evidence);
    if (last?.diffs.length === 0) {
      return result(
        "passed",
        `it fixed the pre-existing child; not ready when the kit stopped watching (${last.reason})`,
        evidence,
      );
    }
    return result(
      "passed",
      `never ready while the child differed (${last?.reason ?? "?"}; ${last?.diffs.length ?? "?"} field(s) still differ): it did not take the foreign child for its own`,
      evidence,
    );
  });
}

/**
 * From the write log, in order: the first successful status write that
 * claims Ready (the contract's predicate on the status it sent) before the
 * operator's first effective write to the pre-existing child. Until that
 * write the child is exactly the kit's copy, which differs from the
 * reference, so such a claim is Ready over a child that differs, however
 * briefly. Undefined when the operator wrote the child first, or never
 * claimed Ready.
 */
export function readyClaimBeforeRepair(
  writes: readonly WriteEntry[],
  readiness: Readiness,
  cr: CustomResourceKind,
  child: { readonly group: string; readonly resource: string; readonly name: string },
): WriteEntry | undefined {
  for (const w of writes) {
    if (w.actor !== "operator" || w.code < 200 || w.code >= 300) continue;
    const toChild =
      !w.subresource && w.group === child.group && w.resource === child.resource && w.name === child.name;
    if (toChild && (w.effect === "changed" || w.effect === "created")) return undefined;
    if (isStatusWrite(w, cr) && statusClaim(readiness, w.body).ready) return w;
  }
  return undefined;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function removeAt(object: unknown, path: readonly (string | number)[]): void {
  const parent = valueAt(object, path.slice(0, -1));
  const key = path.at(-1);
  if (typeof parent === "object" && parent !== null && key !== undefined) {
    delete (parent as Record<string | number, unknown>)[key];
  }
}

function setAt(object: unknown, path: readonly (string | number)[], value: unknown): void {
  const parent = valueAt(object, path.slice(0, -1));
  const key = path.at(-1);
  if (typeof parent === "object" && parent !== null && key !== undefined) {
    (parent as Record<string | number, unknown>)[key] = value;
  }
}
