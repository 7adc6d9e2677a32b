import { describeError } from "../errors.js";
import { isNotFound } from "../kube/api-errors.js";
import type { KubeObject } from "../kube/kube-client.js";
import type { WriteEntry } from "../proxy/write-log.js";
import { doneRegardless, holds, notYet, untilQuiet } from "./quiet-wait.js";
import { Inconclusive, type Scenario, type ScenarioDeps } from "./scenario.js";

// The deletion of a scenario's custom resource, as the deletion suite and the
// spec-0 reference need it: the kit's delete, then the wait until the
// custom resource is gone and the operator quiet.

/** How the kit deletes: as `kubectl delete` does (Background), or `--cascade=foreground`. */
export type Propagation = "Background" | "Foreground";

/** What one deletion of the custom resource gave. */
export interface DeletionRecord {
  /** The operator's finalizers on the custom resource before the delete. */
  readonly finalizers: readonly string[];
  /** The write log's sequence number of the kit's delete. */
  readonly deleteSeq: number;
  /** The operator's writes after the delete (its own namespace, ignored kinds left out). */
  readonly writes: readonly WriteEntry[];
  /** Undefined once the custom resource is gone; else what was left at the deadline. */
  readonly stuck?: string;
}

/** The API server's own finalizers, which its garbage collector releases. */
const API_SERVER_FINALIZERS = new Set(["foregroundDeletion", "orphan"]);

/**
 * The operator's own finalizers: whatever is on the converged custom
 * resource and was not on the sample the kit created, in any form
 * (`example.com/cleanup`, `deletion.finalizers.orders.example.com`, a bare
 * word), except the API server's (`foregroundDeletion`, `orphan`) and
 * Kubernetes' (`kubernetes.io/...`, `*.kubernetes.io/...`).
 */
export function operatorFinalizers(object: KubeObject | undefined, sample?: KubeObject): string[] {
  const written = new Set(sample?.metadata?.finalizers ?? []);
  return (object?.metadata?.finalizers ?? []).filter(
    (f) =>
      !written.has(f) &&
      !API_SERVER_FINALIZERS.has(f) &&
      !f.startsWith("kubernetes.io/") &&
      !/^[^/]*\.kubernetes\.io\//.test(f),
  );
}

/** The kit deletes the custom resource; returns the sequence number of its delete in the write log. */
export async function deleteCustomResource(scenario: Scenario, propagation: Propagation): Promise<number> {
  try {
    await scenario.kit.delete(scenario.customResource, { propagationPolicy: propagation });
  } catch (error) {
    throw new Inconclusive(`the API server refused to delete the custom resource: ${describeError(error)}`);
  }
  return scenario.proxy.writeLog.lastSeq;
}

/**
 * The kit's own finalizer, which keeps a terminating custom resource after
 * the operator and the garbage collector are done with it (holdTerminating).
 */
export const HOLD_FINALIZER = "reconcile-conformance.dev/hold-terminating";

/**
 * Puts the kit's finalizer on the converged custom resource, before a
 * delete: the custom resource then stays terminating after the operator
 * released its own finalizers and the garbage collector removed what it
 * owns, until releaseHold. On a real cluster a foreground deletion lasts as
 * long as its slowest dependent's graceful end (a Pod's is 30 s by
 * default), and other controllers' finalizers keep objects longer still;
 * on kwok Pods end at once, and the window in which a reconcile of the
 * terminating object can recreate what was just deleted closes within
 * milliseconds, before the operator's events arrive when the machine is
 * busy. The hold keeps that window open the same on every machine.
 */
export async function holdTerminating(scenario: Scenario): Promise<void> {
  let refusal: unknown;
  // The operator may change the finalizers between the read and the patch: read again then.
  for (let attempt = 0; attempt < 3; attempt++) {
    const cr = await scenario.kit.get(scenario.customResource);
    const finalizers = cr.metadata?.finalizers ?? [];
    const patch =
      finalizers.length > 0
        ? [{ op: "add", path: "/metadata/finalizers/-", value: HOLD_FINALIZER }]
        : [{ op: "add", path: "/metadata/finalizers", value: [HOLD_FINALIZER] }];
    try {
      await scenario.kit.patchJson(scenario.customResource, patch);
      return;
    } catch (error) {
      refusal = error;
    }
  }
  throw new Inconclusive(
    `the API server refused the kit's finalizer ${HOLD_FINALIZER} on the custom resource: ${describeError(refusal)}`,
  );
}

/** Takes the kit's finalizer off the custom resource (nothing when it is gone or carries none). */
export async function releaseHold(scenario: Scenario): Promise<void> {
  let refusal: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const cr = await scenario.kit.tryGet(scenario.customResource);
    const index = cr?.metadata?.finalizers?.indexOf(HOLD_FINALIZER) ?? -1;
    if (index < 0) return;
    const path = `/metadata/finalizers/${index}`;
    try {
      // The test keeps a concurrent change of the list from removing another finalizer.
      await scenario.kit.patchJson(scenario.customResource, [
        { op: "test", path, value: HOLD_FINALIZER },
        { op: "remove", path },
      ]);
      return;
    } catch (error) {
      if (isNotFound(error)) return;
      refusal = error;
    }
  }
  throw new Inconclusive(
    `the API server refused to take the kit's finalizer ${HOLD_FINALIZER} off the custom resource: ${describeError(refusal)}`,
  );
}

/** How untilDeleted waits beyond its defaults. */
export interface DeletionWait {
  /** Ends the wait early when it says done (a fault that acted). */
  readonly until?: () => boolean;
  /** Counts the custom resource as done once the kit's hold (holdTerminating) is all that keeps it. */
  readonly held?: boolean;
}

/**
 * Waits until the custom resource is gone (or, `held`, only the kit's hold
 * keeps it) and the operator has been quiet for the quiet period since (or
 * `until` says done earlier); at the convergence timeout, says what is left
 * rather than throwing.
 */
export async function untilDeleted(
  scenario: Scenario,
  deps: Pick<ScenarioDeps, "clock" | "signal">,
  from: number,
  { until, held = false }: DeletionWait = {},
): Promise<string | undefined> {
  const deleted = await untilQuiet(scenario, {
    awaited: held
      ? "the end of everything but the kit's hold on the terminating custom resource"
      : "the deletion of the custom resource",
    stimulusAt: deps.clock.now(),
    signal: deps.signal,
    observe: async () => {
      if (until?.()) return doneRegardless(undefined);
      const cr = await scenario.kit.tryGet(scenario.customResource);
      if (cr) {
        const finalizers = cr.metadata?.finalizers ?? [];
        // The kit's own hold is never what a deadline blames: it waits for the others.
        const others = held ? finalizers.filter((f) => f !== HOLD_FINALIZER) : finalizers;
        if (held && others.length === 0) {
          return holds(
            undefined,
            "only the kit's hold keeps the custom resource; the operator is not quiet yet",
          );
        }
        return notYet(
          `the custom resource is still there${others.length > 0 ? ` with finalizers ${others.join(", ")}` : ""}${held ? " besides the kit's hold" : ""} (deletionTimestamp ${String(cr.metadata?.deletionTimestamp ?? "none")})`,
        );
      }
      return holds(undefined, "the custom resource is gone; the operator is not quiet yet");
    },
    atDeadline: ({ timeoutMs, lastReason }): string =>
      `${lastReason} ${Math.round(timeoutMs / 1000)} s after ${from === 0 ? "the delete" : `write ${from}`}`,
  });
  return deleted.value;
}

/** Deletes the converged custom resource (carrying the operator's `finalizers`) and records the operator's deletion writes (the spec-0 reference's). */
export async function recordDeletion(
  scenario: Scenario,
  finalizers: readonly string[],
  deps: Parameters<typeof untilDeleted>[1],
): Promise<DeletionRecord> {
  const deleteSeq = await deleteCustomResource(scenario, "Background");
  const stuck = await untilDeleted(scenario, deps, deleteSeq);
  return {
    finalizers,
    deleteSeq,
    writes: scenario.operatorWrites({ after: deleteSeq }),
    ...(stuck ? { stuck } : {}),
  };
}
