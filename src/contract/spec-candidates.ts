import { isDeepStrictEqual } from "node:util";
import { asRecord, isRecord, valueAt } from "../util/records.js";
import { stringVariation, withinBounds } from "./crd-schema-guesses.js";

// The spec changes the kit can make up from a CRD's openAPIV3Schema, for the differential check
// to judge (spec exploration): every field the schema types, nested ones included, changed one at a
// time from a base spec. Pure: the API server checks each candidate before use (explore-spec.ts),
// and what it refuses is dropped, so a guess here may be wrong but never becomes a verdict.

/** A path into the custom resource: "spec", then keys and list positions. */
export type FieldPath = readonly (string | number)[];

/** What a candidate does to its field. */
export type ChangeKind =
  "value" | "flip" | "set" | "remove" | "element-added" | "element-removed" | "key-added" | "key-removed";

/** One made-up change of one field of the base spec. */
export interface SpecCandidate {
  /** Where: ["spec", "pages"], ["spec", "containers", 0, "port"]. */
  readonly path: FieldPath;
  readonly change: ChangeKind;
  /** The merge patch of the custom resource that makes it: { spec: ... }. */
  readonly patch: Readonly<Record<string, unknown>>;
  /** In words, as verdicts name it: "spec.pages: key page1.md removed". */
  readonly description: string;
}

/** A field the kit makes no change of, and why (the report lists them). */
export interface FieldLeftAlone {
  /** "spec.schedule". */
  readonly field: string;
  readonly why: string;
}

/**
 * Every change of the base spec the schema allows the kit to make up, in
 * the order of the spec's fields (depth first), and the fields left alone:
 * numbers within their bounds, another enum value or a string in its own
 * form, booleans flipped, optional fields set when absent and removed when
 * present, list elements and map keys added and removed within their
 * counts (a list-map's keys and a set's elements kept unique). Pure.
 */
export function specCandidates(
  spec: unknown,
  specSchema: Record<string, unknown>,
): { readonly candidates: readonly SpecCandidate[]; readonly leftAlone: readonly FieldLeftAlone[] } {
  const walker = new Walker(isRecord(spec) ? spec : {});
  walker.object(["spec"], asRecord(spec), specSchema);
  return { candidates: walker.candidates, leftAlone: walker.leftAlone };
}

/** "spec.containers[0].port". */
export function fieldName(path: FieldPath): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

/** JSON of a value in a description, cut short. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? "undefined";
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

const IMAGE = /^([a-z0-9.-]+(:\d+)?\/)?[a-z0-9._/-]+(:[\w.-]+)?(@sha256:[a-f0-9]{64})?$/;

class Walker {
  readonly candidates: SpecCandidate[] = [];
  readonly leftAlone: FieldLeftAlone[] = [];

  constructor(private readonly spec: Record<string, unknown>) {}

  private add(path: FieldPath, change: ChangeKind, value: unknown, description: string): void {
    this.candidates.push({
      path,
      change,
      patch: { spec: patchFor(this.spec, path.slice(1), value) },
      description,
    });
  }

  private alone(path: FieldPath, why: string): void {
    this.leftAlone.push({ field: fieldName(path), why });
  }

  object(path: FieldPath, value: Record<string, unknown>, schema: Record<string, unknown>): void {
    const properties = asRecord(schema.properties);
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    for (const [key, property] of Object.entries(properties)) {
      if (!isRecord(property)) continue;
      this.field([...path, key], value[key], property, required.has(key));
    }
  }

  private field(path: FieldPath, value: unknown, schema: Record<string, unknown>, required: boolean): void {
    const name = fieldName(path);
    if (value === undefined) {
      if (required) return;
      const set = valueToSet(schema);
      if (set === undefined) {
        this.alone(path, "absent, and the kit found no value it could set it to with certainty");
      } else {
        this.add(path, "set", set, `${name}: set to ${shown(set)}`);
      }
      return;
    }
    if (!required && value !== null) this.add(path, "remove", null, `${name}: removed (was ${shown(value)})`);
    if (schema["x-kubernetes-int-or-string"] === true) {
      this.alone(path, "an int-or-string (a quantity, a port name or number) the kit does not vary");
      return;
    }
    switch (schema.type) {
      case "integer":
      case "number":
        return this.number(path, value, schema);
      case "boolean":
        if (typeof value === "boolean") this.add(path, "flip", !value, `${name}: ${value} → ${!value}`);
        return;
      case "string":
        return this.string(path, value, schema);
      case "array":
        return this.list(path, value, schema);
      case "object":
        if (!isRecord(value)) return;
        if (isRecord(schema.properties)) return this.object(path, value, schema);
        if (isRecord(schema.additionalProperties)) return this.map(path, value, schema);
        this.alone(path, "an object of any form (x-kubernetes-preserve-unknown-fields)");
        return;
      default:
        this.alone(path, "no type in the schema");
    }
  }

  private number(path: FieldPath, value: unknown, schema: Record<string, unknown>): void {
    if (typeof value !== "number") return;
    const name = fieldName(path);
    if (Array.isArray(schema.enum)) {
      const other = (schema.enum as unknown[]).find((e) => typeof e === "number" && e !== value);
      if (other !== undefined) this.add(path, "value", other, `${name}: ${value} → ${shown(other)}`);
      return;
    }
    const step = typeof schema.multipleOf === "number" ? schema.multipleOf : 1;
    const to = [value + step, value - step].find((n) => withinBounds(n, schema));
    if (to === undefined) this.alone(path, "no other value within its bounds");
    else this.add(path, "value", to, `${name}: ${value} → ${to}`);
  }

  private string(path: FieldPath, value: unknown, schema: Record<string, unknown>): void {
    if (typeof value !== "string") return;
    const name = fieldName(path);
    if (Array.isArray(schema.enum)) {
      const other = schema.enum.find((e): e is string => typeof e === "string" && e !== value);
      if (other !== undefined) this.add(path, "value", other, `${name}: ${shown(value)} → ${shown(other)}`);
      return;
    }
    const key = path.at(-1);
    if (/image/i.test(String(key)) && IMAGE.test(value) && value.includes("/")) {
      this.alone(path, "an image reference: another tag may not exist where the cluster pulls it");
      return;
    }
    const variation = stringVariation(String(key), value, schema);
    if ("why" in variation) this.alone(path, variation.why);
    else this.add(path, "value", variation.to, `${name}: ${shown(value)} → ${shown(variation.to)}`);
  }

  private list(path: FieldPath, value: unknown, schema: Record<string, unknown>): void {
    if (!Array.isArray(value)) return;
    const list = value as unknown[];
    const name = fieldName(path);
    const items = asRecord(schema.items);
    const { minItems = 0, maxItems = Infinity } = schema as { minItems?: number; maxItems?: number };
    const last = list.at(-1);
    if (list.length < maxItems) {
      const added = last === undefined ? valueToSet(items) : uniqueCopy(list, last, items, schema);
      if (added === undefined) {
        this.alone(path, "no element the kit could add that keeps the list's elements unique");
      } else {
        const what =
          last === undefined
            ? shown(added)
            : `a copy of element ${list.length - 1}${isDeepStrictEqual(added, last) ? "" : ", varied"}`;
        this.add(path, "element-added", [...list, added], `${name}: element added (${what})`);
      }
    }
    if (list.length > minItems && last !== undefined) {
      this.add(
        path,
        "element-removed",
        list.slice(0, -1),
        `${name}: element ${list.length - 1} removed (${shown(last)})`,
      );
    }
    // The fields of its first element, each changed where the others stay (the whole list is written).
    const [first] = list;
    if (isRecord(first) && isRecord(items.properties)) this.object([...path, 0], first, items);
  }

  private map(path: FieldPath, value: Record<string, unknown>, schema: Record<string, unknown>): void {
    const name = fieldName(path);
    const keys = Object.keys(value);
    const { minProperties = 0, maxProperties = Infinity } = schema as {
      minProperties?: number;
      maxProperties?: number;
    };
    const entry = asRecord(schema.additionalProperties);
    const lastKey = keys.at(-1);
    if (keys.length < maxProperties) {
      const key = unusedKey(keys, lastKey);
      const added = lastKey === undefined ? valueToSet(entry) : value[lastKey];
      if (added === undefined) this.alone(path, "no value the kit could give a new key with certainty");
      else this.add([...path, key], "key-added", added, `${name}: key ${key} added (${shown(added)})`);
    }
    if (keys.length > minProperties && lastKey !== undefined) {
      this.add([...path, lastKey], "key-removed", null, `${name}: key ${lastKey} removed`);
    }
  }
}

/** A new key beside `keys`: the last key with "-added", or "added". */
function unusedKey(keys: readonly string[], lastKey: string | undefined): string {
  let key = lastKey === undefined ? "added" : `${lastKey}-added`;
  while (keys.includes(key)) key = `${key}-added`;
  return key;
}

/**
 * A copy of `element` to append to `list`: as it is in a list of any form,
 * varied where the list's type asks its elements to be unique (a set's
 * element, a list-map's keys); undefined when no variation keeps them so.
 */
function uniqueCopy(
  list: readonly unknown[],
  element: unknown,
  items: Record<string, unknown>,
  schema: Record<string, unknown>,
): unknown {
  const listType = schema["x-kubernetes-list-type"];
  if (listType === "set") {
    const varied = variedScalar(element, items, list);
    return varied;
  }
  if (listType === "map" && isRecord(element)) {
    const keys = Array.isArray(schema["x-kubernetes-list-map-keys"])
      ? schema["x-kubernetes-list-map-keys"]
      : [];
    const copy: Record<string, unknown> = structuredClone(element);
    const properties = asRecord(items.properties);
    for (const key of keys) {
      if (typeof key !== "string") return undefined;
      const others = list.map((e) => asRecord(e)[key]);
      const varied = variedScalar(copy[key], asRecord(properties[key]), others);
      if (varied === undefined) return undefined;
      copy[key] = varied;
    }
    return copy;
  }
  return structuredClone(element);
}

/** Another scalar of `schema`'s form that `taken` does not hold, or undefined. */
function variedScalar(value: unknown, schema: Record<string, unknown>, taken: readonly unknown[]): unknown {
  if (typeof value === "number") {
    for (let n = value + 1; n < value + 1000; n++)
      if (withinBounds(n, schema) && !taken.includes(n)) return n;
    return undefined;
  }
  if (typeof value === "string") {
    let current = value;
    for (let i = 0; i < 5; i++) {
      const variation = stringVariation("", current, schema);
      if ("why" in variation) return undefined;
      if (!taken.includes(variation.to)) return variation.to;
      current = variation.to;
    }
  }
  return undefined;
}

/**
 * A value to set an absent field to, from its schema alone: another than
 * its default, within its bounds and form; undefined when the schema does
 * not say enough (a pattern, a format, a required field of unknown form).
 */
export function valueToSet(schema: Record<string, unknown>): unknown {
  const fallback = schema.default;
  if (Array.isArray(schema.enum)) return schema.enum.find((e) => !isDeepStrictEqual(e, fallback));
  switch (schema.type) {
    case "boolean":
      return fallback === true ? false : true;
    case "integer":
    case "number": {
      const floor = typeof schema.minimum === "number" ? schema.minimum : 0;
      const step = typeof schema.multipleOf === "number" ? schema.multipleOf : 1;
      for (let n = floor === 0 ? step : floor; n < floor + 100 * step; n += step) {
        if (withinBounds(n, schema) && n !== fallback) return n;
      }
      return undefined;
    }
    case "string": {
      if (schema.pattern !== undefined || schema.format !== undefined) return undefined;
      const minLength = typeof schema.minLength === "number" ? schema.minLength : 0;
      const text = "generated".padEnd(minLength, "x");
      return typeof schema.maxLength === "number" && text.length > schema.maxLength ? undefined : text;
    }
    case "array": {
      const minItems = typeof schema.minItems === "number" ? schema.minItems : 0;
      if (minItems > 1) return undefined;
      const element = valueToSet(asRecord(schema.items));
      return element === undefined ? undefined : [element];
    }
    case "object": {
      if (isRecord(schema.additionalProperties)) {
        const entry = valueToSet(schema.additionalProperties);
        return entry === undefined ? undefined : { generated: entry };
      }
      if (!isRecord(schema.properties)) return undefined;
      const object: Record<string, unknown> = {};
      for (const key of Array.isArray(schema.required) ? schema.required : []) {
        if (typeof key !== "string") return undefined;
        const value = valueToSet(asRecord(schema.properties[key]));
        if (value === undefined) return undefined;
        object[key] = value;
      }
      if (Object.keys(object).length > 0) return object;
      // An object with no required field: set its first simply typed one, so that setting it says something.
      for (const [key, property] of Object.entries(schema.properties)) {
        if (!isRecord(property) || property.type === "object" || property.type === "array") continue;
        const value = valueToSet(property);
        if (value !== undefined) return { [key]: value };
      }
      return {};
    }
    default:
      return undefined;
  }
}

/**
 * The merge patch (under spec) that puts `value` at `path` of `spec`
 * (null removes it). A merge patch replaces lists whole, so a change under
 * a list position writes the whole list with that element changed.
 */
function patchFor(spec: Record<string, unknown>, path: FieldPath, value: unknown): Record<string, unknown> {
  const listAt = path.findIndex((p) => typeof p === "number");
  if (listAt === -1) return nest(path as readonly string[], value);
  const listPath = path.slice(0, listAt) as readonly string[];
  const list = structuredClone(valueAt(spec, listPath)) as unknown[];
  setIn(list, path.slice(listAt), value);
  return nest(listPath, list);
}

function nest(path: readonly string[], value: unknown): Record<string, unknown> {
  return path.reduceRight<Record<string, unknown>>((inner, key) => ({ [key]: inner }), value as never);
}

function setIn(target: unknown, path: FieldPath, value: unknown): void {
  const [head, ...rest] = path;
  if (head === undefined || typeof target !== "object" || target === null) return;
  const container = target as Record<string | number, unknown>;
  if (rest.length === 0) {
    if (value === null && !Array.isArray(container)) delete container[head];
    else container[head] = value;
    return;
  }
  setIn(container[head], rest, value);
}

/**
 * Which of a field's changes to try first: a change or a removal within a
 * present value before the field's removal, and both before an addition.
 * An operator's create path is its add path, so an addition rarely shows a
 * difference between an update and a creation; what an update takes away
 * or changes (an entry never pruned, a field applied only at create) does.
 */
const CHANGE_ORDER: Readonly<Record<ChangeKind, number>> = {
  value: 0,
  flip: 0,
  "element-removed": 0,
  "key-removed": 0,
  remove: 1,
  set: 2,
  "element-added": 2,
  "key-added": 2,
};

/**
 * Which candidates become generated updates, at most `budget`, the same
 * for the same seed: first those whose field's value shows in a child of
 * the reference (`shows`: the field drives state the differential can
 * compare), then the rest; within each, changes before removals before
 * additions (CHANGE_ORDER), then a seeded order; one change per field
 * before any field's second. Pure.
 */
export function chooseCandidates(
  candidates: readonly SpecCandidate[],
  {
    budget,
    seed,
    shows,
  }: { readonly budget: number; readonly seed: number; readonly shows: (c: SpecCandidate) => boolean },
): SpecCandidate[] {
  const random = seededRandom(seed);
  const keyed = candidates.map((candidate) => ({
    candidate,
    rank: shows(candidate) ? 0 : 1,
    order: CHANGE_ORDER[candidate.change],
    draw: random(),
  }));
  keyed.sort((a, b) => a.rank - b.rank || a.order - b.order || a.draw - b.draw);
  const ordered = keyed.map((k) => k.candidate);
  const seen = new Set<string>();
  const first: SpecCandidate[] = [];
  const later: SpecCandidate[] = [];
  for (const candidate of ordered) {
    // A key added to a map and one removed are changes of the same field.
    const field = fieldName(
      candidate.change.startsWith("key-") ? candidate.path.slice(0, -1) : candidate.path,
    );
    (seen.has(field) ? later : first).push(candidate);
    seen.add(field);
  }
  return [...first, ...later].slice(0, Math.max(0, budget));
}

/** mulberry32: a small PRNG whose sequence a seed fixes. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Whether any scalar the sample holds at `path` (the value, a list's or a
 * map's entries) shows among a child's scalar values: the field drives
 * something the comparison of children can see. Pure.
 */
export function valueShowsIn(sample: unknown, path: FieldPath, children: readonly unknown[]): boolean {
  const field = valueAt(sample, path);
  if (field === undefined) return false;
  const wanted = new Set(
    scalars(field)
      .map((s) => String(s))
      .filter((s) => s.length > 0),
  );
  if (wanted.size === 0) return false;
  return children.some((child) => {
    const { metadata: _metadata, ...rest } = asRecord(child);
    const labels = [
      asRecord(asRecord(child).metadata).labels,
      asRecord(asRecord(child).metadata).annotations,
    ];
    return [...scalars(rest), ...scalars(labels)].some((s) => {
      const text = String(s);
      return wanted.has(text) || [...wanted].some((w) => w.length > 3 && text.includes(w));
    });
  });
}

function scalars(value: unknown): unknown[] {
  if (Array.isArray(value)) return value.flatMap(scalars);
  if (isRecord(value)) return [...Object.keys(value), ...Object.values(value).flatMap(scalars)];
  return value === null || value === undefined ? [] : [value];
}
