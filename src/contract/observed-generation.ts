import { asRecord } from "../util/records.js";

/**
 * The one reader of what a custom resource says it has observed, shared by
 * readiness and every check: the Ready condition (or, failing that, the
 * Available one), and the generation its conclusions are about: that
 * condition's own observedGeneration if it has one, else
 * status.observedGeneration. Pure.
 */

/** A condition as the status reports it. */
export interface Condition {
  readonly type: string;
  readonly status?: unknown;
  readonly observedGeneration?: unknown;
  readonly lastTransitionTime?: unknown;
}

/** The conditions of a status (entries without a string type left out). */
export function conditionsOf(status: unknown): Condition[] {
  const conditions = asRecord(status).conditions;
  return Array.isArray(conditions)
    ? conditions
        .map(asRecord)
        .filter((c): c is Record<string, unknown> & Condition => typeof c.type === "string")
    : [];
}

/** The condition readiness reads: Ready, else Available. */
export function readinessCondition(object: unknown): Condition | undefined {
  const conditions = conditionsOf(asRecord(object).status);
  return conditions.find((c) => c.type === "Ready") ?? conditions.find((c) => c.type === "Available");
}

/** The observedGeneration as written (any JSON value), the condition's first; undefined when none is. */
export function observedGenerationValue(object: unknown): unknown {
  return (
    readinessCondition(object)?.observedGeneration ?? asRecord(asRecord(object).status).observedGeneration
  );
}

/** The observed generation as a whole number; undefined when there is none, or it is not one. */
export function observedGenerationOf(object: unknown): number | undefined {
  const value = observedGenerationValue(object);
  return typeof value === "number" && Number.isInteger(value) ? value : undefined;
}
