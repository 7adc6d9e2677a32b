import { describeError } from "../errors.js";
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
 * Waits until the custom resource is gone and the operator has been quiet
 * for the quiet period since (or `until` says done earlier: a fault that
 * acted); at the convergence timeout, says what is left rather than throwing.
 */
export async function untilDeleted(
  scenario: Scenario,
  deps: Pick<ScenarioDeps, "clock" | "signal">,
  from: number,
  until?: () => boolean,
): Promise<string | undefined> {
  const deleted = await untilQuiet(scenario, {
    awaited: "the deletion of the custom resource",
    stimulusAt: deps.clock.now(),
    signal: deps.signal,
    observe: async () => {
      if (until?.()) return doneRegardless(undefined);
      const cr = await scenario.kit.tryGet(scenario.customResource);
      if (cr) {
        const finalizers = cr.metadata?.finalizers ?? [];
        return notYet(
          `the custom resource is still there${finalizers.length > 0 ? ` with finalizers ${finalizers.join(", ")}` : ""} (deletionTimestamp ${String(cr.metadata?.deletionTimestamp ?? "none")})`,
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
