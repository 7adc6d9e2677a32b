import { isDeepStrictEqual } from "node:util";
import { isRecord } from "./records.js";

/**
 * Lists whose elements are told apart by a key, not by their position. Many
 * lists in Kubernetes objects are sets in all but their JSON: a Service's
 * ports, a container's env, a pod's volumes, a resource's conditions. The
 * server merges them by key (strategic merge keys, `x-kubernetes-list-map-keys`),
 * and an operator may write them in any order (from a Go map, say): two
 * lives that differ only by that order hold the same object. Pure.
 *
 * Two uses, two sets of keys:
 * - identityKey: what an element is across writes of one object (`type`,
 *   `name`), which the write log's paths and the roles' paths use. A value
 *   a spec changes (a port number) is no identity over time.
 * - comparisonKey: what makes two lives' lists the same set; the identity
 *   keys, then the built-in kinds' merge keys that are values (a port, a
 *   mount path), which an unnamed element is known by.
 */

/** Fields that name an element for as long as it lives. */
const IDENTITY_KEYS = ["type", "name"] as const;

/**
 * The built-in kinds' merge keys of lists whose elements need no name: a
 * Service's or a container's ports, volume mounts and devices, host aliases,
 * topology spread constraints.
 */
const VALUE_KEYS = ["port", "containerPort", "mountPath", "devicePath", "ip", "topologyKey"] as const;

/**
 * Lists whose order means something although their elements have names:
 * init containers run one after another, in the list's order.
 */
const ORDERED_LISTS = new Set(["initContainers"]);

type Scalar = string | number | boolean;
const isScalar = (value: unknown): value is Scalar =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean";

function keyedBy(key: string, lists: readonly (readonly unknown[])[]): boolean {
  return lists.every((list) => {
    const values = list.map((e) => (isRecord(e) ? e[key] : undefined));
    return values.every(isScalar) && new Set(values.map(String)).size === values.length;
  });
}

/**
 * The identity key of lists (each must be keyed by it): `type` or `name`
 * when every element of each has a distinct string one; undefined for lists
 * kept by position (and for lists that are all empty).
 */
export function identityKey(...lists: readonly (readonly unknown[])[]): string | undefined {
  if (!lists.some((list) => list.length > 0)) return undefined;
  return IDENTITY_KEYS.find(
    (key) =>
      keyedBy(key, lists) &&
      lists.every((list) => list.every((e) => isRecord(e) && typeof e[key] === "string")),
  );
}

/**
 * The key two lives' lists (the list at `field` of its parent) compare by:
 * an identity key, else a merge key every element of each has, distinct;
 * undefined for lists whose order is their meaning (lists of scalars,
 * init containers, lists of objects with no such key).
 */
export function comparisonKey(
  field: string | number | undefined,
  ...lists: readonly (readonly unknown[])[]
): string | undefined {
  if (typeof field === "string" && ORDERED_LISTS.has(field)) return undefined;
  if (!lists.some((list) => list.length > 0)) return undefined;
  if (!lists.every((list) => list.every(isRecord))) return undefined;
  return identityKey(...lists) ?? VALUE_KEYS.find((key) => keyedBy(key, lists));
}

/**
 * A value with every list that has a comparison key sorted by it, at every
 * depth: two values that differ only in the order of keyed elements read
 * the same.
 */
export function canonicalOrder(value: unknown, field?: string | number): unknown {
  if (Array.isArray(value)) {
    const items = value.map((item, i) => canonicalOrder(item, i));
    const key = comparisonKey(field, items);
    if (key === undefined) return items;
    return [...items].sort((a, b) => {
      const left = String((a as Record<string, unknown>)[key]);
      const right = String((b as Record<string, unknown>)[key]);
      return left < right ? -1 : left > right ? 1 : 0;
    });
  }
  if (isRecord(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, canonicalOrder(v, k)]));
  }
  return value;
}

/** Whether two values are the same, keyed lists compared by key whatever their order. */
export function sameValue(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b) || isDeepStrictEqual(canonicalOrder(a), canonicalOrder(b));
}

/**
 * The positions in `to` of the element `path` reaches in `from`: at each
 * list, the element with the same comparison key (`ports[1]` in `from` is
 * the port of the same name in `to`, wherever it is), or the same position
 * where the list has no key. Undefined when `to` has no such element.
 */
export function relocated(
  path: readonly (string | number)[],
  from: unknown,
  to: unknown,
): (string | number)[] | undefined {
  const out: (string | number)[] = [];
  let here = from;
  let there = to;
  let field: string | number | undefined;
  for (const part of path) {
    if (typeof part === "number") {
      if (!Array.isArray(here) || !Array.isArray(there) || part >= here.length) return undefined;
      const key = comparisonKey(field, here, there);
      const element: unknown = here[part];
      const at =
        key === undefined
          ? part
          : there.findIndex(
              (e) => isRecord(e) && isRecord(element) && String(e[key]) === String(element[key]),
            );
      if (at < 0 || at >= there.length) return undefined;
      out.push(at);
      here = element;
      there = there[at];
    } else {
      out.push(part);
      here = isRecord(here) ? here[part] : undefined;
      there = isRecord(there) ? there[part] : undefined;
    }
    field = part;
  }
  return out;
}
