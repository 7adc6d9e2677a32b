import { isDeepStrictEqual } from "node:util";
import { withoutUids } from "../proxy/faults.js";
import { comparisonKey, identityKey } from "../util/keyed-lists.js";
import type { ObjectPath } from "../util/object-paths.js";
import { isRecord } from "../util/records.js";

/**
 * A child's values as they compare across lives (child-roles.ts has the
 * lives): each life's read in its own terms (UIDs, its namespace and the
 * names of its children that vary with the life as placeholders), and the
 * values the operator generates once per life (a random password) masked,
 * never compared with another life's. Pure.
 */

/** A path into an object: keys and list positions (as drift targets name them). */
export type ValuePath = readonly (string | number)[];

/**
 * Whether the value at `path` is one the operator generates once per life,
 * or lies inside one: `perLife` a role's. A path that merely holds one (a
 * container's env list with one generated variable) is not: it is compared
 * with its generated parts masked (maskPerLife).
 */
export function isPerLife(perLife: readonly ValuePath[] | undefined, path: ValuePath): boolean {
  return (perLife ?? []).some((p) => p.length <= path.length && p.every((part, i) => part === path[i]));
}

/** What a value generated once per life reads as once masked. */
export const GENERATED_ONCE_PER_LIFE = "<generated once per life>";

/**
 * A value (a lifeValue) with every per-life part replaced by one
 * placeholder, so what surrounds a generated value still compares across
 * lives. Paths that the value does not have are left alone.
 */
export function maskPerLife(value: unknown, perLife: readonly ValuePath[] | undefined): unknown {
  let masked = value;
  for (const path of perLife ?? []) masked = replaceAt(masked, path, GENERATED_ONCE_PER_LIFE);
  return masked;
}

function replaceAt(value: unknown, path: ValuePath, replacement: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return replacement;
  if (typeof head === "number") {
    if (!Array.isArray(value) || head >= value.length) return value;
    return (value as unknown[]).map((item, i) => (i === head ? replaceAt(item, rest, replacement) : item));
  }
  if (typeof value !== "object" || value === null || Array.isArray(value) || !(head in value)) return value;
  const record = value as Record<string, unknown>;
  return { ...record, [head]: replaceAt(record[head], rest, replacement) };
}

/** The per-life paths at or inside `path`: the generated values a target holds. */
export function perLifeWithin(perLife: readonly ValuePath[] | undefined, path: ValuePath): ValuePath[] {
  return (perLife ?? []).filter((p) => p.length >= path.length && path.every((part, i) => part === p[i]));
}

/**
 * A child's values as they compare across lives: UIDs read `<uid>`, the
 * life's namespace `<namespace>`, and the names of children whose names vary
 * with the life `<Kind/template>`. Metadata other than labels and
 * annotations, and status, are left out: the server and the life own them.
 */
export function lifeValue(
  object: unknown,
  namespace: string,
  names: readonly (readonly [string, string])[] = [],
): unknown {
  const { metadata, status: _status, ...rest } = (object ?? {}) as Record<string, unknown>;
  const meta = (metadata ?? {}) as Record<string, unknown>;
  return readAcrossLives(
    {
      ...rest,
      metadata: {
        ...(meta.labels === undefined ? {} : { labels: meta.labels }),
        ...(meta.annotations === undefined ? {} : { annotations: meta.annotations }),
      },
    },
    { namespace, names },
  );
}

/** Any value with UIDs, the life's namespace and its life-dependent names read as placeholders. */
function readAcrossLives(value: unknown, reading: LifeReading): unknown {
  const replace = (item: unknown): unknown => {
    if (typeof item === "string") {
      let text = item;
      for (const [from, to] of reading.names) text = text.split(from).join(to);
      if (reading.namespace) text = text.split(reading.namespace).join("<namespace>");
      return text;
    }
    if (Array.isArray(item)) return item.map(replace);
    if (typeof item === "object" && item !== null) {
      return Object.fromEntries(Object.entries(item).map(([k, v]) => [k, replace(v)]));
    }
    return item;
  };
  return replace(withoutUids(value));
}

/**
 * How one life's values read across lives: its namespace, and the
 * substitutions of its children's life-dependent names (scenarioSubstitutions).
 */
export interface LifeReading {
  readonly namespace: string;
  readonly names: readonly (readonly [string, string])[];
}

/**
 * A child's value (found at `path`) of one life as it compares with
 * another life's: UIDs, the namespace and life-dependent names read as
 * placeholders, and the values generated once per life inside it masked.
 */
export function comparableValue(
  value: unknown,
  path: ValuePath,
  reading: LifeReading,
  perLife: readonly ValuePath[] | undefined,
): unknown {
  const inside = perLifeWithin(perLife, path).map((p) => p.slice(path.length));
  return maskPerLife(readAcrossLives(value, reading), inside);
}

/**
 * The leaf paths where two values differ, at `a`'s positions: keyed lists
 * element by element of the same key (keyed-lists.ts) whatever their order,
 * other lists by position; a list of other keys or of another length is the
 * list.
 */
export function differingValues(a: unknown, b: unknown, path: (string | number)[] = []): ValuePath[] {
  if (isDeepStrictEqual(a, b)) return [];
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    const key = comparisonKey(path.at(-1), a, b);
    if (key === undefined) return a.flatMap((item, i) => differingValues(item, b[i], [...path, i]));
    const keyOf = (e: unknown) => String((e as Record<string, unknown>)[key]);
    const other = new Map(b.map((e) => [keyOf(e), e]));
    if (a.every((e) => other.has(keyOf(e)))) {
      return a.flatMap((item, i) => differingValues(item, other.get(keyOf(item)), [...path, i]));
    }
  }
  const isMap = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  if (isMap(a) && isMap(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => differingValues(a[k], b[k], [...path, k]));
  }
  return [path];
}

/**
 * A path with each list position read in `object` as what the element is
 * (`env[name=PASSWORD]`) where its list is keyed, so that it finds the same
 * element in another object whose list has more, fewer or reordered
 * elements (a later spec's child). Undefined when a position is not in
 * `object`.
 */
export function keyedPath(path: ValuePath, object: unknown): ObjectPath | undefined {
  const segments: ObjectPath[number][] = [];
  let current = object;
  for (const part of path) {
    if (typeof part === "number") {
      if (!Array.isArray(current) || part >= current.length) return undefined;
      const list = current as unknown[];
      const key = identityKey(list);
      const element = list[part];
      segments.push(key && isRecord(element) ? { key, value: String(element[key]) } : { index: part });
      current = element;
    } else {
      segments.push({ field: part });
      current = isRecord(current) ? current[part] : undefined;
    }
  }
  return segments;
}

/** A keyedPath's positions in `object`; undefined when an element it names is not there. */
export function positionsIn(path: ObjectPath, object: unknown): ValuePath | undefined {
  const parts: (string | number)[] = [];
  let current = object;
  for (const segment of path) {
    if ("field" in segment) {
      parts.push(segment.field);
      current = isRecord(current) ? current[segment.field] : undefined;
    } else if ("index" in segment) {
      parts.push(segment.index);
      current = Array.isArray(current) ? (current as unknown[])[segment.index] : undefined;
    } else if ("key" in segment) {
      if (!Array.isArray(current)) return undefined;
      const list = current as unknown[];
      const at = list.findIndex((e) => isRecord(e) && e[segment.key] === segment.value);
      if (at < 0) return undefined;
      parts.push(at);
      current = list[at];
    } else return undefined;
  }
  return parts;
}

// Where the same element is in another object (a keyed list in another order): keyed-lists.ts.
export { relocated } from "../util/keyed-lists.js";
