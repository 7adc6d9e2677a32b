import { randomBytes } from "node:crypto";
import { describeError } from "../errors.js";
import { isConflict } from "../kube/api-errors.js";
import type { CheckDefinition, ScenarioResult, Suite, SuiteContext } from "./check.js";

const optimisticConcurrency: CheckDefinition = {
  id: "cluster/optimistic-concurrency",
  level: "MUST",
  summary: "the cluster rejects a stale replace with 409 Conflict, as every other check assumes",
};

/**
 * Run once per run, before anything else: a suite must never pass because
 * the cluster lacks the property it relies on (the seeds' first
 * experiment: two writers from the same read, the second gets 409).
 */
export const clusterSanity: Suite = {
  name: "cluster",
  checks: [optimisticConcurrency],
  async run(context: SuiteContext, selected): Promise<ScenarioResult[]> {
    if (!selected.has(optimisticConcurrency.id)) return [];
    return [await staleReplace(context)];
  },
};

async function staleReplace(context: SuiteContext): Promise<ScenarioResult> {
  const { kube } = context.deps;
  const started = context.clock.now();
  const namespace = `rc-cluster-${randomBytes(3).toString("hex")}`;
  const result = (
    status: ScenarioResult["status"],
    message: string,
    notes: string[] = [],
  ): ScenarioResult => ({
    check: optimisticConcurrency.id,
    target: "ConfigMap stale replace",
    status,
    message,
    durationMs: context.clock.now() - started,
    ...(notes.length > 0 ? { evidence: { notes } } : {}),
  });
  try {
    await kube.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    const created = await kube.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "optimistic-concurrency", namespace },
      data: { writer: "none" },
    });
    await kube.replace({ ...created, data: { writer: "first" } });
    try {
      await kube.replace({ ...created, data: { writer: "second" } }); // still carries the first read's resourceVersion
    } catch (error) {
      if (isConflict(error)) {
        return result("passed", "a replace carrying a stale resourceVersion was answered 409 Conflict");
      }
      return result("inconclusive", `the stale replace failed otherwise: ${describeError(error)}`);
    }
    return result(
      "failed",
      "a replace carrying a stale resourceVersion succeeded: this cluster does not enforce optimistic concurrency",
      [`resourceVersion sent: ${created.metadata?.resourceVersion ?? "?"}`],
    );
  } catch (error) {
    return result("inconclusive", `could not run the experiment: ${describeError(error)}`);
  } finally {
    await kube.delete({ apiVersion: "v1", kind: "Namespace", name: namespace }).catch(() => undefined);
  }
}
