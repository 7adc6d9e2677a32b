import { asRecord, isRecord } from "../util/records.js";

// What init guesses from the openAPIV3Schema of the CRD version that serves the sample: example
// updates, and which readiness rule fits. Pure; both are a start for the user to revise.

/** One change of one top-level spec field, for the starter's `updates`. */
export interface ProposedUpdate {
  readonly field: string;
  readonly from: string | number;
  readonly to: string | number;
  /** What kind of value the string was read as, when it was varied in its own form ("a cron schedule"). */
  readonly form?: string;
}

/** A top-level spec string the kit cannot vary safely, and why: the starter says so. */
export interface FieldLeftAlone {
  readonly field: string;
  readonly why: string;
}

/**
 * Changes of top-level spec fields the sample sets and the CRD's schema
 * types simply, each field at most once, integers first: an integer + 1
 * (within its bounds), else a string (another enum value, or another value
 * in its own form: stringVariation). Fields with a pattern, a format or CEL
 * validations are left alone: the kit cannot tell what they accept.
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
    const variation = stringVariation(field, value, property);
    if ("to" in variation) proposed.push({ field, from: value, ...variation });
  }
  return proposed;
}

/**
 * The top-level spec strings the sample sets that proposeUpdates leaves
 * alone, with why: a pattern or format the kit cannot satisfy, or a value
 * the operator parses (a URL, a schedule it cannot read) that a
 * suffix would make invalid or, worse, leave meaning the same.
 */
export function fieldsLeftAlone(spec: unknown, schema: Record<string, unknown>): FieldLeftAlone[] {
  if (!isRecord(spec)) return [];
  const properties = asRecord(asRecord(asRecord(schema.properties).spec).properties);
  return Object.entries(spec).flatMap(([field, value]) => {
    const property = properties[field];
    if (!isRecord(property) || property.type !== "string" || typeof value !== "string") return [];
    if (property["x-kubernetes-validations"] !== undefined) {
      return [{ field, why: "CEL validations the kit cannot read" }];
    }
    if (Array.isArray(property.enum)) return [];
    const variation = stringVariation(field, value, property);
    return "why" in variation ? [{ field, why: variation.why }] : [];
  });
}

/** Field names that say the operator parses the value as time: a schedule, a period, a timeout. */
const TIME_FIELD = /schedule|cron|interval|period|duration|timeout|ttl|every|frequency|deadline/i;
const CRON_SHORTHAND = ["@hourly", "@daily", "@weekly", "@monthly", "@yearly", "@annually", "@midnight"];
const CRON = /^[\d*/,?LW#A-Za-z-]+(\s+[\d*/,?LW#A-Za-z-]+){4,5}$/;
const GO_DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
const QUANTITY = /^(\d+(\.\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)$/;
const URL = /^[a-z][a-z0-9+.-]*:\/\//i;
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/**
 * Another value of a spec string in its own form, or why there is none the
 * kit can trust: a cron schedule gets another schedule, a duration and a
 * quantity twice their number, any other string a suffix while it stays
 * valid (an image gets another tag, which a cluster that pulls images must
 * have); a URL, a pattern or a format is left alone, since a suffix would
 * make it invalid or, parsed, mean the same.
 */
export function stringVariation(
  field: string,
  value: string,
  property: Record<string, unknown>,
): { readonly to: string; readonly form?: string } | { readonly why: string } {
  const fits = (to: string) => typeof property.maxLength !== "number" || to.length <= property.maxLength;
  const checked = (to: string | undefined, form: string) =>
    to !== undefined && to !== value && fits(to)
      ? { to, form }
      : { why: `a ${form} the kit found no other valid value of` };
  if (property.pattern !== undefined) return { why: "a pattern the kit cannot satisfy with certainty" };
  if (property.format !== undefined) {
    return {
      why: `format ${typeof property.format === "string" ? property.format : JSON.stringify(property.format)}`,
    };
  }
  if (CRON_SHORTHAND.includes(value)) {
    return checked(value === "@hourly" ? "@daily" : "@hourly", "cron schedule");
  }
  if (CRON.test(value.trim())) return checked(otherCron(value.trim()), "cron schedule");
  if (GO_DURATION.test(value)) return checked(doubledLeadingNumber(value), "duration");
  if (QUANTITY.test(value)) return checked(doubledLeadingNumber(value), "quantity");
  if (URL.test(value)) return { why: "a URL the operator would connect to" };
  if (TIME_FIELD.test(field)) {
    return { why: "its name says the operator parses it as time, in a form the kit does not know" };
  }
  const to = `${value}-updated`;
  if (DNS_LABEL.test(value) && to.length > 63) return { why: "a name with no room for a suffix" };
  if (!fits(to)) return { why: "no room for a suffix within its maxLength" };
  return { to };
}

// A cron schedule with another minute field: every N minutes becomes every N+1, minute M becomes
// M+30, every minute becomes every other minute; undefined when the field is of another form.
function otherCron(schedule: string): string | undefined {
  const [minute, ...rest] = schedule.split(/\s+/);
  if (minute === undefined) return undefined;
  const every = /^\*\/(\d+)$/.exec(minute);
  let next: string | undefined;
  if (minute === "*") next = "*/2";
  else if (every) next = Number(every[1]) < 30 ? `*/${Number(every[1]) + 1}` : undefined;
  else if (/^\d+$/.test(minute)) next = String((Number(minute) + 30) % 60);
  return next === undefined ? undefined : [next, ...rest].join(" ");
}

/** "30s" -> "60s", "1m30s" -> "2m30s", "512Mi" -> "1024Mi". */
function doubledLeadingNumber(value: string): string {
  return value.replace(/^\d+(\.\d+)?/, (n) => String(Number(n) * 2));
}

/**
 * How often a spec field of the sample says the operator acts on its own
 * clock, when one does (a cron schedule every N minutes, an interval or
 * period given as a duration): the starter's clock horizon comes from it.
 * Undefined when no field says so.
 */
export function schedulePeriodMs(spec: unknown): { readonly field: string; readonly ms: number } | undefined {
  if (!isRecord(spec)) return undefined;
  for (const [field, value] of Object.entries(spec)) {
    if (typeof value !== "string") continue;
    const schedule = value.trim();
    if (CRON.test(schedule)) {
      const minute = schedule.split(/\s+/)[0] ?? "";
      const every = /^\*\/(\d+)$/.exec(minute);
      const ms = minute === "*" ? 60_000 : every ? Number(every[1]) * 60_000 : 3_600_000;
      return { field, ms };
    }
    if (CRON_SHORTHAND.includes(schedule))
      return { field, ms: schedule === "@hourly" ? 3_600_000 : 86_400_000 };
    if (TIME_FIELD.test(field) && !/timeout|ttl|deadline/i.test(field) && GO_DURATION.test(schedule)) {
      return { field, ms: goDurationMs(schedule) };
    }
  }
  return undefined;
}

function goDurationMs(text: string): number {
  const unit: Record<string, number> = {
    ns: 1e-6,
    us: 1e-3,
    µs: 1e-3,
    ms: 1,
    s: 1000,
    m: 60_000,
    h: 3_600_000,
  };
  let total = 0;
  for (const [, n, , u] of text.matchAll(/(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) {
    total += Number(n) * (unit[u ?? "ms"] ?? 0);
  }
  return Math.round(total);
}

/**
 * The starter's updates: two changes of different fields when the schema
 * offers them, else two changes of the one field it offers (two updates are
 * what staleness/missed-intermediate-state and conflict/status-update need,
 * so no MUST check is skipped on a first run for want of a second), else
 * none.
 */
export function proposeStarterUpdates(spec: unknown, schema: Record<string, unknown>): ProposedUpdate[] {
  const proposed = proposeUpdates(spec, schema).slice(0, 2);
  const [only] = proposed;
  if (proposed.length !== 1 || only === undefined) return proposed;
  const property = asRecord(asRecord(asRecord(schema.properties).spec).properties)[only.field];
  const values = isRecord(property) && Array.isArray(property.enum) ? property.enum : undefined;
  // Onward, never back to where the first started: a third enum value, a number one more step the
  // same way, or the next step of the string's form.
  const onward =
    typeof only.from === "number" && typeof only.to === "number"
      ? only.to + (only.to - only.from)
      : undefined;
  const next =
    onward !== undefined
      ? isRecord(property) && withinBounds(onward, property)
        ? onward
        : undefined
      : values
        ? values.find(
            (e): e is string | number =>
              (typeof e === "string" || typeof e === "number") && e !== only.from && e !== only.to,
          )
        : proposeUpdates({ [only.field]: only.to }, schema).find((u) => u.to !== only.from)?.to;
  return next === undefined ? proposed : [only, { field: only.field, from: only.to, to: next }];
}

/** Whether `n` lies within the schema's minimum and maximum (exclusive ones included). */
export function withinBounds(n: number, property: Record<string, unknown>): boolean {
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
