import { randomBytes } from "node:crypto";
import { describeError } from "../../errors.js";
import { isConflict } from "../../kube/api-errors.js";
import { defineCheck, type Judgement } from "../check.js";

/** What became of the second of two replaces made from the same read. */
export type StaleReplace =
  | { readonly outcome: "conflict" }
  | { readonly outcome: "accepted"; readonly sentResourceVersion?: string }
  | { readonly outcome: "refused-otherwise"; readonly error: string }
  | { readonly outcome: "could-not-run"; readonly error: string };

/**
 * Run once per run, before anything else: a suite must never pass because
 * the cluster lacks the property it relies on (the seeds' first
 * experiment: two writers from the same read, the second gets 409). It
 * needs no operator: the kit writes directly, in a namespace of its own.
 */
export const optimisticConcurrency = defineCheck<string, StaleReplace>({
  id: "cluster/optimistic-concurrency",
  level: "MUST",
  summary: "the cluster rejects a stale replace with 409 Conflict, as every other check assumes",
  everyShard: true,
  targets: () => ["ConfigMap stale replace"],
  targetName: (target) => target,
  observer: {
    scenario: "cluster",
    async observe({ deps }) {
      const { kube } = deps;
      const namespace = `rc-cluster-${randomBytes(3).toString("hex")}`;
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
          // Still carries the first read's resourceVersion.
          await kube.replace({ ...created, data: { writer: "second" } });
        } catch (error) {
          return isConflict(error)
            ? { outcome: "conflict" }
            : { outcome: "refused-otherwise", error: describeError(error) };
        }
        const sent = created.metadata?.resourceVersion;
        return { outcome: "accepted", ...(sent === undefined ? {} : { sentResourceVersion: sent }) };
      } catch (error) {
        return { outcome: "could-not-run", error: describeError(error) };
      } finally {
        await kube.delete({ apiVersion: "v1", kind: "Namespace", name: namespace }).catch(() => undefined);
      }
    },
  },
  judge(observation): Judgement {
    switch (observation.outcome) {
      case "conflict":
        return {
          status: "passed",
          message: "a replace carrying a stale resourceVersion was answered 409 Conflict",
        };
      case "accepted":
        return {
          status: "failed",
          message:
            "a replace carrying a stale resourceVersion succeeded: this cluster does not enforce optimistic concurrency",
          evidence: { notes: [`resourceVersion sent: ${observation.sentResourceVersion ?? "?"}`] },
        };
      case "refused-otherwise":
        return {
          status: "inconclusive",
          message: `the stale replace failed otherwise: ${observation.error}`,
        };
      case "could-not-run":
        return { status: "inconclusive", message: `could not run the experiment: ${observation.error}` };
    }
  },
});
