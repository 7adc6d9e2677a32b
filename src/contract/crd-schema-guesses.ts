import { asRecord, isRecord } from "../util/records.js";

// What init guesses from the openAPIV3Schema of the CRD version that serves the sample: example
// updates, and which readiness rule fits. Pure; both are a start for the user to revise.

/** One change of one top-level spec field, for the starter's `updates`. */
export interface ProposedUpdate {
  readonly field: string;
  readonly from: string | number;
  readonly to: string | number;
}

/**
 * Changes of top-level spec fields the sample sets and the CRD's schema
 * types simply, each field at most once, integers first: an integer + 1
 * (within its bounds), else a string (another enum value, or the value with
 * "-updated"). Fields with a pattern, a format or CEL validations are left
 * alone: the kit cannot tell what they accept.
 */
export function proposeUpdates(spec: unknown, schema: Record<string, unknown>): ProposedUpdate[] {
  if (!isRecord(spec)) return [];
  const properties = asRecord(asRecord(asRecord(schema.properties).spec).properties);
  const fields = Object.entries(spec).flatMap(([field, value]) => {
    const property = properties[field];
    return isRecord(property) && property["x-kubernetes-validations"] === undefined
      ? [{ field, value, property }]
      : [];
  });
  const proposed: ProposedUpdate[] = [];
  for (const { field, value, property } of fields) {
    if (property.type !== "integer" || typeof value !== "number" || !Number.isInteger(value)) continue;
    if (property.multipleOf !== undefined || property.enum !== undefined) continue;
    const fits = (n: number) => withinBounds(n, property);
    if (fits(value + 1)) proposed.push({ field, from: value, to: value + 1 });
    else if (fits(value - 1)) proposed.push({ field, from: value, to: value - 1 });
  }
  for (const { field, value, property } of fields) {
    if (property.type !== "string" || typeof value !== "string") continue;
    if (Array.isArray(property.enum)) {
      const other = property.enum.find((e): e is string => typeof e === "string" && e !== value);
      if (other !== undefined) proposed.push({ field, from: value, to: other });
      continue;
    }
    if (property.pattern !== undefined || property.format !== undefined) continue;
    const to = `${value}-updated`;
    if (typeof property.maxLength === "number" && to.length > property.maxLength) continue;
    proposed.push({ field, from: value, to });
  }
  return proposed;
}

/**
 * The starter's updates: two changes of different fields when the schema
 * offers them (two updates are what staleness/missed-intermediate-state and
 * conflict/status-update need), else what there is.
 */
export function proposeStarterUpdates(spec: unknown, schema: Record<string, unknown>): ProposedUpdate[] {
  return proposeUpdates(spec, schema).slice(0, 2);
}

function withinBounds(n: number, property: Record<string, unknown>): boolean {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = property;
  if (typeof minimum === "number" && (exclusiveMinimum === true ? n <= minimum : n < minimum)) return false;
  if (typeof maximum === "number" && (exclusiveMaximum === true ? n >= maximum : n > maximum)) return false;
  return true;
}

/** "quiet" when the CRD's schema shows a status without conditions (or no status); else "conditions". */
export function chooseReadiness(schema: Record<string, unknown>): "conditions" | "quiet" {
  const properties = schema.properties;
  if (!isRecord(properties)) return "conditions";
  const status = properties.status;
  if (status === undefined) return "quiet";
  const statusProperties = asRecord(status).properties;
  return isRecord(statusProperties) && statusProperties.conditions === undefined ? "quiet" : "conditions";
}
