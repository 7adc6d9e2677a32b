import { normalisedKey, normalisedName } from "../proxy/faults.js";
import type { ObjectPath } from "../util/object-paths.js";
import {
  differingValues,
  keyedPath,
  lifeValue,
  positionsIn,
  type LifeReading,
  type ValuePath,
} from "./life-values.js";
import { changesAfterCreate, writesOfChild } from "./life-writes.js";
import type { WriteEntry } from "../proxy/write-log.js";
import { describeTemplate, fits, templateOf, type NameTemplate } from "./name-templates.js";

// Name templates have a module of their own; what reads roles finds them here too.
export { describeTemplate, fits, templateOf, type NameTemplate } from "./name-templates.js";

/**
 * Which child of one life is which child of another: children matched by
 * their role, not their literal name. Scenarios live in namespaces of their
 * own, with custom resources of their own UIDs, and operators name children
 * from that identity in many forms (the whole UID, a prefix of it, a hash of
 * namespace/name, a generateName suffix). A full UID reads `<uid>`
 * everywhere (normalisedName); every other form is learned from two
 * fault-free lives of the same spec: a name that is the same in both is its
 * own role; names that differ are paired by kind, and the part that varies
 * becomes a wildcard (`orders-auth-*`, 8 hex digits). Two lives also show
 * which values the operator generates once per life (a random password):
 * those never compare across lives, only within one (end-state.ts).
 *
 * Pure: the reference computes the lives and hands them here.
 */

/** One role: a child the operator makes in every life, whatever it is called there. */
export interface ChildRole {
  readonly kind: string;
  /** Its resource as writes name it. */
  readonly group: string;
  readonly resource: string;
  /** What every comparison keys it by: "Service/hello", "Secret/orders-auth-*". */
  readonly key: string;
  /** The name part of the key: "hello", "orders-auth-*". */
  readonly name: string;
  /** The template of a name that varies between lives; absent for a name that does not. */
  readonly template?: NameTemplate;
  /** Its names in the lives it was learned from (normalised), for the evidence. */
  readonly names: readonly string[];
  /** Values that differed between the two lives: generated once per life, compared only within one. */
  readonly perLife: readonly ValuePath[];
  /**
   * Per-life values a reference life's operator set by a write after the
   * child's create (it fills them in later): one such change in a life is
   * their generation, not a regeneration.
   */
  readonly setAfterCreate?: readonly ValuePath[];
  /**
   * perLife and setAfterCreate with list positions read as what the
   * elements are in the first life (`env[name=PASSWORD]`): a later spec's
   * child, whose lists may have more or fewer elements, finds them by it
   * (perLifeIn). Absent in observations recorded before it.
   */
  readonly keyed?: {
    readonly perLife: readonly ObjectPath[];
    readonly setAfterCreate: readonly ObjectPath[];
  };
}

/** Children of one kind whose names the kit could not pair between the two lives. */
export interface UnpairedNames {
  readonly kind: string;
  /** Its resource as writes name it. */
  readonly group?: string;
  readonly resource?: string;
  readonly names: readonly string[];
  readonly why: string;
}

/** What two lives taught: the roles, and the names no role could be given. */
export interface ChildRoles {
  readonly roles: readonly ChildRole[];
  readonly unpaired: readonly UnpairedNames[];
  /**
   * Why the roles come from one life only (its second did not converge):
   * every name then looks fixed, though some may vary with the life, so a
   * child missing under its name while another of its kind is there cannot
   * be told from a renamed one.
   */
  readonly oneLife?: string;
  /**
   * The reference life of the spec these roles serve ended with its
   * operator's delayed requeue still pending (SpecReference.delayedRequeue):
   * its clock had work to come that the reference never lived to see, so a
   * longer life may hold a tick's child the reference cannot speak for
   * (clock-children.ts). Set by spec-references.ts, not learned, and only
   * without a clock horizon.
   */
  readonly clockPending?: true;
}

/** One child of one life, as the reference recorded it. */
export interface LifeChild {
  readonly kind: string;
  readonly group: string;
  readonly resource: string;
  readonly name: string;
  readonly object: unknown;
}

/** One fault-free life: its namespace, its children in the order they were created, and the operator's writes. */
export interface Life {
  readonly namespace: string;
  readonly children: readonly LifeChild[];
  readonly writes?: readonly WriteEntry[];
}

/** Where a name stands among the roles. */
export type RoleMatch =
  | { readonly status: "role"; readonly role: ChildRole }
  /** No role has it: keyed by its own normalised name (a child no reference life made). */
  | { readonly status: "unknown"; readonly key: string }
  /** Two templates or more fit it: which child it is cannot be told. */
  | { readonly status: "ambiguous"; readonly key: string; readonly candidates: readonly ChildRole[] };

/** The role of a child named `name` (a literal name; full UIDs are normalised here). */
export function roleOf(roles: ChildRoles | undefined, kind: string, name: string): RoleMatch {
  const normalised = normalisedName({ name });
  const key = `${kind}/${normalised}`;
  const ofKind = (roles?.roles ?? []).filter((r) => r.kind === kind);
  const literal = ofKind.find((r) => r.template === undefined && r.key === key);
  if (literal) return { status: "role", role: literal };
  const fitting = ofKind.filter((r) => r.template !== undefined && fits(r.template, normalised));
  const [only] = fitting;
  if (fitting.length === 1 && only) return { status: "role", role: only };
  if (fitting.length > 1) return { status: "ambiguous", key, candidates: fitting };
  return { status: "unknown", key };
}

/** The role whose key is `key` ("Secret/orders-auth-*"), if the roles have it. */
export function roleByKey(roles: ChildRoles | undefined, key: string): ChildRole | undefined {
  return roles?.roles.find((r) => r.key === key);
}

/** The key a child compares by: its role's, or its own normalised name's. */
export function roleKey(roles: ChildRoles | undefined, kind: string, name: string): string {
  const match = roleOf(roles, kind, name);
  return match.status === "role" ? match.role.key : match.key;
}

/**
 * The roles two fault-free lives of one spec show. Names equal in both (once
 * full UIDs are normalised) are roles of their own; the rest are paired
 * within their kind, each with the name of the other life whose template
 * fits it best. A kind whose varying names cannot be paired one to one (not
 * as many in each life, no shared text, a template that fits two of them) is
 * left `unpaired`: a comparison that meets them says it cannot tell.
 */
export function learnRoles(first: Life, second: Life): ChildRoles {
  const key = (c: LifeChild) => `${c.kind}/${normalisedName({ name: c.name })}`;
  const secondKeys = new Set(second.children.map(key));
  const firstKeys = new Set(first.children.map(key));
  const roles: { role: Omit<ChildRole, "perLife">; a: LifeChild; b: LifeChild }[] = [];
  const unpaired: UnpairedNames[] = [];

  for (const a of first.children) {
    if (!secondKeys.has(key(a))) continue;
    if (roles.some((r) => r.role.key === key(a))) continue;
    const b = second.children.find((c) => key(c) === key(a));
    const name = normalisedName({ name: a.name });
    if (b) roles.push({ role: { ...resourceOf(a), key: key(a), name, names: [name] }, a, b });
  }

  const kinds = [...new Set([...first.children, ...second.children].map((c) => c.kind))];
  for (const kind of kinds) {
    let left = first.children.filter((c) => c.kind === kind && !secondKeys.has(key(c)));
    let right = second.children.filter((c) => c.kind === kind && !firstKeys.has(key(c)));
    // A child created with generateName has its fixed text on record: its create's generateName,
    // which no comparison of two names can tell from the suffix when it ends in no separator.
    for (const paired of pairByGenerateName(left, first, right, second)) {
      roles.push(paired);
      left = left.filter((c) => c !== paired.a);
      right = right.filter((c) => c !== paired.b);
    }
    if (left.length === 0 && right.length === 0) continue;
    const names = (list: readonly LifeChild[]) => list.map((c) => normalisedName({ name: c.name }));
    const allNames = [...names(left), ...names(right)];
    if (left.length !== right.length) {
      unpaired.push({
        ...resourceOf([...left, ...right][0]),
        names: allNames,
        why: `${left.length} ${kind}(s) named differently in one reference life and ${right.length} in the other`,
      });
      continue;
    }
    const paired = pairByTemplate(names(left), names(right));
    if (!paired) {
      unpaired.push({
        ...resourceOf([...left, ...right][0]),
        names: allNames,
        why: `the ${kind} names of the two reference lives share no fixed text that tells them apart`,
      });
      continue;
    }
    for (const { i, j, template } of paired) {
      const a = left[i];
      const b = right[j];
      if (!a || !b) continue;
      roles.push({
        role: {
          ...resourceOf(a),
          key: `${kind}/${describeTemplate(template)}`,
          name: describeTemplate(template),
          template,
          names: [normalisedName({ name: a.name }), normalisedName({ name: b.name })],
        },
        a,
        b,
      });
    }
  }

  const firstNames = substitutions(roles.map((r) => ({ name: r.a.name, role: r.role })));
  const secondNames = substitutions(roles.map((r) => ({ name: r.b.name, role: r.role })));
  return {
    roles: roles.map(({ role, a, b }) => {
      const perLife = differingValues(
        lifeValue(a.object, first.namespace, firstNames),
        lifeValue(b.object, second.namespace, secondNames),
      );
      const setAfterCreate = perLife.filter(
        (path) =>
          changesAfterCreate(first.writes ?? [], a, path, a.object).length > 0 ||
          changesAfterCreate(second.writes ?? [], b, path, b.object).length > 0,
      );
      // Paths learned from `a` are all in it: keyedPath finds every position.
      const keyedIn = (paths: readonly ValuePath[]) =>
        paths.map((path) => keyedPath(path, a.object) ?? path.map(asSegment));
      return {
        ...role,
        perLife,
        ...(setAfterCreate.length > 0 ? { setAfterCreate } : {}),
        keyed: { perLife: keyedIn(perLife), setAfterCreate: keyedIn(setAfterCreate) },
      };
    }),
    unpaired,
  };
}

/**
 * The children of one kind that the operator created with a generateName
 * used by exactly one child in each life, paired by it: the template is the
 * generateName and the server's suffix (letters and digits).
 */
function pairByGenerateName(
  left: readonly LifeChild[],
  first: Life,
  right: readonly LifeChild[],
  second: Life,
): { role: Omit<ChildRole, "perLife">; a: LifeChild; b: LifeChild }[] {
  const generated = (children: readonly LifeChild[], life: Life) =>
    children.flatMap((child) => {
      const generateName = writesOfChild(life.writes ?? [], child).created?.generateName;
      return generateName && child.name.startsWith(generateName) && child.name.length > generateName.length
        ? [{ child, generateName }]
        : [];
    });
  const ofLeft = generated(left, first);
  const ofRight = generated(right, second);
  const once = (list: typeof ofLeft, generateName: string) => {
    const found = list.filter((g) => g.generateName === generateName);
    return found.length === 1 ? found[0] : undefined;
  };
  return ofLeft.flatMap(({ child: a, generateName }) => {
    const b = once(ofRight, generateName)?.child;
    if (!once(ofLeft, generateName) || !b) return [];
    const suffixA = a.name.length - generateName.length;
    const suffixB = b.name.length - generateName.length;
    const template: NameTemplate = {
      prefix: normalisedName({ name: generateName }),
      suffix: "",
      ...(suffixA === suffixB ? { length: suffixA } : {}),
      alphabet: "alnum",
    };
    return [
      {
        role: {
          ...resourceOf(a),
          key: `${a.kind}/${describeTemplate(template)}`,
          name: describeTemplate(template),
          template,
          names: [normalisedName({ name: a.name }), normalisedName({ name: b.name })],
        },
        a,
        b,
      },
    ];
  });
}

function asSegment(part: string | number): ObjectPath[number] {
  return typeof part === "number" ? { index: part } : { field: part };
}

function resourceOf(child: LifeChild | undefined): Pick<ChildRole, "kind" | "group" | "resource"> {
  return { kind: child?.kind ?? "", group: child?.group ?? "", resource: child?.resource ?? "" };
}

/** Whether writes to this resource name objects whose names the two lives could not pair. */
export function unpairedResource(
  roles: ChildRoles | undefined,
  write: { readonly group: string; readonly resource: string },
): boolean {
  return (roles?.unpaired ?? []).some((u) => u.group === write.group && u.resource === write.resource);
}

/**
 * The key a write compares by across lives: "secrets/orders-auth-*" for a
 * child with a role, normalisedKey (UIDs and generateName suffixes
 * normalised) for any other object.
 */
export function writeKey(
  roles: ChildRoles | undefined,
  write: {
    readonly group: string;
    readonly resource: string;
    readonly name?: string;
    readonly generateName?: string;
  },
): string {
  const fallback = normalisedKey(write);
  if (!write.name || write.generateName) return fallback;
  const ofResource = (roles?.roles ?? []).filter(
    (r) => r.group === write.group && r.resource === write.resource,
  );
  const [first] = ofResource;
  if (!first) return fallback;
  const match = roleOf({ roles: ofResource, unpaired: [] }, first.kind, write.name);
  if (match.status !== "role") return fallback;
  return `${write.group ? `${write.resource}.${write.group}` : write.resource}/${match.role.name}`;
}

/**
 * Pairs each name of one life with one of the other so that every pair's
 * template fits its own two names and no other name of either list;
 * undefined when that cannot be done (two roles whose names are alike).
 */
function pairByTemplate(
  left: readonly string[],
  right: readonly string[],
): { i: number; j: number; template: NameTemplate }[] | undefined {
  const candidates: { i: number; j: number; template: NameTemplate; fixed: number }[] = [];
  left.forEach((a, i) =>
    right.forEach((b, j) => {
      const template = templateOf(a, b);
      if (template)
        candidates.push({ i, j, template, fixed: template.prefix.length + template.suffix.length });
    }),
  );
  candidates.sort((x, y) => y.fixed - x.fixed);
  const pairs: { i: number; j: number; template: NameTemplate }[] = [];
  for (const c of candidates) {
    if (pairs.some((p) => p.i === c.i || p.j === c.j)) continue;
    pairs.push({ i: c.i, j: c.j, template: c.template });
  }
  if (pairs.length !== left.length) return undefined;
  const everyName = [...left, ...right];
  const unique = pairs.every((p) => everyName.filter((name) => fits(p.template, name)).length === 2);
  return unique ? pairs : undefined;
}

/**
 * Names of templated roles, longest first, and what they read as in values:
 * each literally and as it reads once its full UIDs are `<uid>` (lifeValue
 * normalises UIDs before it substitutes names).
 */
function substitutions(
  named: readonly { name: string; role: Omit<ChildRole, "perLife"> }[],
): readonly [string, string][] {
  return named
    .filter(({ role }) => role.template !== undefined)
    .flatMap(({ name, role }): [string, string][] => {
      const normalised = normalisedName({ name });
      return [
        [name, `<${role.key}>`],
        ...(normalised === name ? [] : [[normalised, `<${role.key}>`] as [string, string]]),
      ];
    })
    .sort(([a], [b]) => b.length - a.length);
}

/** The reading of a life (a reference's, a scenario's) whose children are `children`. */
export function lifeReading(
  roles: ChildRoles | undefined,
  namespace: string,
  children: readonly { readonly ref: { readonly kind: string; readonly name: string } }[],
): LifeReading {
  return {
    namespace,
    names: scenarioSubstitutions(
      roles,
      children.map((c) => c.ref),
    ),
  };
}

/** The substitutions for the children of one scenario: each templated role's literal name there. */
export function scenarioSubstitutions(
  roles: ChildRoles | undefined,
  children: readonly { readonly kind: string; readonly name: string }[],
): readonly (readonly [string, string])[] {
  const named = children.flatMap((c) => {
    const match = roleOf(roles, c.kind, c.name);
    return match.status === "role" ? [{ name: c.name, role: match.role }] : [];
  });
  return substitutions(named);
}

/**
 * The child of `children` (one scenario's) with the role of the reference's
 * `kind`/`name`; "ambiguous" when more than one has it.
 */
export function childOfRole<Child extends { readonly ref: { readonly kind: string; readonly name: string } }>(
  roles: ChildRoles | undefined,
  children: readonly Child[],
  kind: string,
  name: string,
): Child | "ambiguous" | undefined {
  const wanted = roleKey(roles, kind, name);
  const found = children.filter((c) => c.ref.kind === kind && roleKey(roles, kind, c.ref.name) === wanted);
  return found.length > 1 ? "ambiguous" : found[0];
}

/**
 * A role's per-life paths as positions in `object` (a child of its role in
 * any spec): found by what the elements are where lists are keyed, so a
 * later spec's env list with one more variable still masks the generated
 * one. Where `object` has no element of that key (the key itself varies
 * with the life, or the element is gone), the position as learned.
 * Without keyed paths (an observation recorded before them), the positions
 * as learned.
 */
export function perLifeIn(
  role: ChildRole | undefined,
  object: unknown,
): { readonly perLife: readonly ValuePath[]; readonly setAfterCreate: readonly ValuePath[] } {
  const positions = (learned: readonly ValuePath[], keyed: readonly ObjectPath[] | undefined) =>
    keyed?.length === learned.length
      ? learned.map((path, i) => {
          const at = keyed[i];
          return (at && positionsIn(at, object)) ?? path;
        })
      : learned;
  return {
    perLife: positions(role?.perLife ?? [], role?.keyed?.perLife),
    setAfterCreate: positions(role?.setAfterCreate ?? [], role?.keyed?.setAfterCreate),
  };
}
