/**
 * Paths into Kubernetes objects, as the write log names what a write changed
 * and as a contract names volatile fields:
 *
 *   status.lastHeartbeatTime
 *   metadata.annotations["example.com/config-hash"]
 *   status.conditions[type=Ready].lastTransitionTime
 *   spec.ports[0].port
 *   status.conditions[*].lastHeartbeatTime        (patterns only: any element)
 *
 * A list whose elements are all objects with a distinct `type` (conditions)
 * or `name` (ports, containers) is keyed by it, so a change reads the same
 * whatever the element's position; any other list by position. Pure.
 */

import { identityKey } from "./keyed-lists.js";

export type PathSegment =
  | { readonly field: string }
  | { readonly index: number }
  | { readonly key: string; readonly value: string }
  | { readonly any: true };

export type ObjectPath = readonly PathSegment[];

/** Thrown by parsePath: says what is wrong and where. */
export class PathSyntaxError extends Error {}

const PLAIN_FIELD = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;
const PLAIN_VALUE = /^[A-Za-z0-9._-]+$/;

export function formatObjectPath(path: ObjectPath): string {
  return path
    .map((segment, i) => {
      if ("field" in segment) {
        if (!PLAIN_FIELD.test(segment.field)) return `[${JSON.stringify(segment.field)}]`;
        return i === 0 ? segment.field : `.${segment.field}`;
      }
      if ("index" in segment) return `[${segment.index}]`;
      if ("key" in segment) {
        const value = PLAIN_VALUE.test(segment.value) ? segment.value : JSON.stringify(segment.value);
        return `[${segment.key}=${value}]`;
      }
      return "[*]";
    })
    .join("");
}

/** Parses a path as formatObjectPath writes it (and `[*]`); throws PathSyntaxError. */
export function parsePath(text: string): ObjectPath {
  const segments: PathSegment[] = [];
  let at = 0;
  const fail = (what: string): never => {
    throw new PathSyntaxError(`${what} at character ${at + 1} of ${JSON.stringify(text)}`);
  };
  const readQuoted = (): string => {
    // A JSON string: find its closing quote (skipping escapes), then let JSON decode it.
    let end = at + 1;
    while (end < text.length && text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
    if (end >= text.length) fail("unterminated string");
    let value = "";
    try {
      value = JSON.parse(text.slice(at, end + 1)) as string;
    } catch {
      fail("not a valid quoted string");
    }
    at = end + 1;
    return value;
  };
  if (text.length === 0) fail("empty path");
  while (at < text.length) {
    const char = text[at];
    if (char === "[") {
      at++;
      if (text[at] === '"') {
        segments.push({ field: readQuoted() });
      } else if (text[at] === "*") {
        at++;
        segments.push({ any: true });
      } else {
        const close = text.indexOf("]", at);
        const inner = close < 0 ? "" : text.slice(at, close);
        const equals = inner.indexOf("=");
        if (/^\d+$/.test(inner)) {
          segments.push({ index: Number(inner) });
          at = close;
        } else if (equals > 0 && PLAIN_FIELD.test(inner.slice(0, equals))) {
          const key = inner.slice(0, equals);
          at += equals + 1;
          let value: string;
          if (text[at] === '"') value = readQuoted();
          else {
            value = text.slice(at, close);
            if (!PLAIN_VALUE.test(value)) fail(`expected a value after "${key}="`);
            at = close;
          }
          segments.push({ key, value });
        } else {
          fail('expected [<index>], [<field>=<value>], [*] or ["<key>"]');
        }
      }
      if (text[at] !== "]") fail('expected "]"');
      at++;
    } else {
      if (char === ".") {
        if (segments.length === 0) fail("a path starts with a field name");
        at++;
      } else if (segments.length > 0) {
        fail('expected "." or "["');
      }
      const match = /^[A-Za-z_$][A-Za-z0-9_$-]*/.exec(text.slice(at));
      if (!match) fail('expected a field name (use ["..."] for keys with other characters)');
      segments.push({ field: match?.[0] ?? "" });
      at += match?.[0].length ?? 0;
    }
  }
  return segments;
}

function segmentMatches(pattern: PathSegment, segment: PathSegment): boolean {
  if ("any" in pattern) return "index" in segment || "key" in segment || "any" in segment;
  if ("field" in pattern) return "field" in segment && segment.field === pattern.field;
  if ("index" in pattern) return "index" in segment && segment.index === pattern.index;
  return "key" in segment && segment.key === pattern.key && segment.value === pattern.value;
}

/** Whether `path` is `pattern` or lies under it (a change inside a volatile field is volatile). */
export function pathWithin(path: ObjectPath, pattern: ObjectPath): boolean {
  if (path.length < pattern.length) return false;
  return pattern.every((segment, i) => {
    const own = path[i];
    return own !== undefined && segmentMatches(segment, own);
  });
}

type Json = unknown;

const isMap = (value: Json): value is Record<string, Json> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The leaf paths where `after` differs from `before`. A map that appears or
 * disappears (or replaces null) counts as its leaves (an annotation added to
 * an object with none reads `metadata.annotations["k"]`, not
 * `metadata.annotations`), an empty one as the map; a list of another
 * length, unless keyed, counts as the list, and so does a keyed list whose
 * elements changed order. `ignore` leaves out paths the server maintains
 * itself.
 */
export function changedPaths(before: Json, after: Json, ignore: readonly ObjectPath[] = []): ObjectPath[] {
  const changes: ObjectPath[] = [];
  const walk = (a: Json, b: Json, path: PathSegment[]) => {
    if (ignore.some((pattern) => pathWithin(path, pattern))) return;
    const absent = (value: Json) => value === undefined || value === null;
    if ((isMap(a) || absent(a)) && (isMap(b) || absent(b)) && (isMap(a) || isMap(b))) {
      const left = isMap(a) ? a : {};
      const right = isMap(b) ? b : {};
      const fields = new Set([...Object.keys(left), ...Object.keys(right)]);
      // An empty map that appeared (or null that became one) has no leaf to name: name the map.
      if (fields.size === 0 && !sameJson(a, b)) changes.push(path);
      for (const field of fields) walk(left[field], right[field], [...path, { field }]);
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      const key = identityKey(a, b);
      if (key !== undefined) {
        const keyOf = (e: Json) => String((e as Record<string, Json>)[key]);
        const left = new Map(a.map((e) => [keyOf(e), e]));
        const right = new Map(b.map((e) => [keyOf(e), e]));
        // Keyed elements are compared whatever their position; a new order of the same ones is a change too.
        const kept = (list: Json[], other: Map<string, Json>) => list.map(keyOf).filter((k) => other.has(k));
        if (kept(a, right).join("\u0000") !== kept(b, left).join("\u0000")) changes.push(path);
        for (const value of new Set([...left.keys(), ...right.keys()])) {
          walk(left.get(value), right.get(value), [...path, { key, value }]);
        }
        return;
      }
      if (a.length === b.length) {
        a.forEach((element, index) => walk(element, b[index], [...path, { index }]));
        return;
      }
    }
    if (!sameJson(a, b)) changes.push(path);
  };
  walk(before, after, []);
  return changes;
}

function sameJson(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((element, i) => sameJson(element, b[i]));
  }
  if (isMap(a) && isMap(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return false;
}
