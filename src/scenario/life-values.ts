import { isDeepStrictEqual } from "node:util";
import { withoutUids } from "../proxy/faults.js";

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

/** The leaf paths where two values differ (lists by position; a list of another length is the list). */
export function differingValues(a: unknown, b: unknown, path: (string | number)[] = []): ValuePath[] {
  if (isDeepStrictEqual(a, b)) return [];
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    return a.flatMap((item, i) => differingValues(item, b[i], [...path, i]));
  }
  const isMap = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  if (isMap(a) && isMap(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => differingValues(a[k], b[k], [...path, k]));
  }
  return [path];
}
