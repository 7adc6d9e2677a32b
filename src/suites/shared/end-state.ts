import { isDeepStrictEqual } from "node:util";
import type { Contract } from "../../contract/load-contract.js";
import type { Evidence } from "../../report/report-model.js";
import { normalisedName } from "../../proxy/faults.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import {
  childOfRole,
  perLifeIn,
  roleKey,
  roleOf,
  scenarioSubstitutions,
  templateOf,
  describeTemplate,
  type ChildRole,
  type ChildRoles,
} from "../../scenario/child-roles.js";
import {
  isPerLife,
  keyedPath,
  lifeValue,
  positionsIn,
  maskPerLife,
  perLifeWithin,
  relocated,
  type ValuePath,
} from "../../scenario/life-values.js";
import { changesAfterCreate, createdWithout, writesOfChild } from "../../scenario/life-writes.js";
import type { ChildRecord, LiveChild } from "../../scenario/reference-state.js";
import type { ReferenceChild } from "../../scenario/spec-references.js";
import type { Judgement } from "../check.js";
import { canonicalOrder } from "../../util/keyed-lists.js";
import { childNamedLikeATick, clockChildrenApart, countByFamily } from "./clock-children.js";
import { formatObjectPath } from "../../util/object-paths.js";
import { driftTargets, formatPath, shownValue, valueAt } from "./drift-targets.js";
import { managedFieldPairs } from "./managed-field-pairs.js";

/** How a scenario's end state differs from the reference of the same spec. */
export interface EndStateComparison {
  /** Reference children with no live counterpart ("Service/hello"). */
  readonly missing: readonly string[];
  /** Kinds with more live children than the reference has, and their names. */
  readonly duplicates: readonly {
    readonly kind: string;
    readonly reference: number;
    readonly now: number;
    readonly names: readonly string[];
  }[];
  /** Fields the operator manages that differ from the reference (UIDs in values normalised). */
  readonly diffs: NonNullable<Evidence["diffs"]>;
  /**
   * Values the operator generates once per life that it changed again
   * within this one ("Secret/orders-auth-* data.password: changed by write
   * 9 after its create (write 5)…"): regenerated, not kept.
   */
  readonly regenerated: readonly string[];
  /**
   * Reference children with no live child of their role, while a live child
   * of the same kind has a name no role could be given: which is which
   * cannot be told, so neither is counted missing.
   */
  readonly unpaired: readonly {
    readonly reference: string;
    readonly live: readonly string[];
    /** Why the names could not be paired. */
    readonly why: string;
  }[];
  /**
   * Managed fields that differ from the reference while the roles come from
   * one life only (ChildRoles.oneLife): a value generated once per life
   * cannot be told from a wrong one, so they are no failure, nor a pass.
   */
  readonly undecided: NonNullable<Evidence["diffs"]>;
  /**
   * With operator-managed fields and the lives the roles were learned from
   * (EndStateContext.learnedFrom): fields both sides have with different
   * values where those lives had no such field, so whether the operator
   * generates them per life is not known. Empty otherwise.
   */
  readonly unlearned: NonNullable<Evidence["diffs"]>;
  /** The live children compared. */
  readonly children: readonly ChildRecord[];
  /**
   * Children the operator's clock made (a schedule's tick: ChildRecord.madeByClock, or one of the
   * same family), never compared field by field: one note each, naming the write and its
   * evidence. Two lives of different lengths see different ticks; that is no fault of the path or
   * of the fault a scenario injected.
   */
  readonly clockMade: readonly string[];
  /**
   * Without a clock horizon, when the reference ended with the operator's
   * delayed requeue pending (ChildRoles.clockPending): how the two sides
   * differ in children whose names vary as a schedule's (clockFamily) and
   * that no role names for the life. Such a child may be a tick that fell
   * due inside other work in one life and not in the other, which nothing
   * tells from an answer: neither a failure nor a pass (unpairedVerdict).
   */
  readonly ticksUndecided: readonly string[];
}

/** Whether the end state is the reference's, as far as the kit can tell (`unpaired` aside: unsureVerdict). */
export function endStateMatches(comparison: EndStateComparison): boolean {
  return (
    comparison.missing.length === 0 &&
    comparison.duplicates.length === 0 &&
    comparison.diffs.length === 0 &&
    comparison.regenerated.length === 0
  );
}

/**
 * The inconclusive verdict of an end state that otherwise matched but has
 * children the kit could not pair with the reference's, both names shown;
 * undefined when every child was paired. Judges return it instead of a
 * pass: a name it could not pair is never a failure, nor a pass.
 */
export function unpairedVerdict(
  comparison: EndStateComparison,
  evidence: Evidence = {},
): Judgement | undefined {
  const { unpaired, undecided, ticksUndecided } = comparison;
  if (unpaired.length === 0 && undecided.length === 0 && ticksUndecided.length === 0) return undefined;
  const pairs = unpaired.map((u) => `${u.reference} (reference) or ${u.live.join(", ")} (here): ${u.why}`);
  const fields = undecided.map((d) => `${d.object} ${d.path}`);
  const parts = [
    ...(pairs.length > 0 ? [`cannot tell which child is which: ${pairs.join("; ")}`] : []),
    ...(fields.length > 0
      ? [
          `${fields.join(", ")} differ from the reference, but with one reference life the kit cannot tell a value generated once per life from a wrong one`,
        ]
      : []),
    ...(ticksUndecided.length > 0
      ? [
          `${ticksUndecided.join("; ")}: children named as a schedule's ticks are, and the reference ended with the operator's delayed requeue pending, so a tick that fell due inside other work in one life cannot be told from an answer; a clock horizon (clock.horizon) lets every life wait for the ticks and compares them`,
        ]
      : []),
  ];
  return {
    status: "inconclusive",
    message: parts.join("; "),
    evidence: {
      ...evidence,
      ...(undecided.length > 0 ? { diffs: [...(evidence.diffs ?? []), ...undecided] } : {}),
      notes: [
        ...(evidence.notes ?? []),
        "children compare by role: a name the same in two fault-free lives, or one whose varying part both lives showed",
      ],
    },
  };
}

/** A path as a person reads it: elements of keyed lists by their key (`env[name=PASSWORD]`). */
function shownPath(path: ValuePath, object: unknown): string {
  const keyed = keyedPath(path, object);
  return keyed ? formatObjectPath(keyed) : formatPath(path);
}

/** One sentence for a comparison that did not match. */
export function describeMismatch(comparison: EndStateComparison): string {
  const parts: string[] = [];
  for (const d of comparison.duplicates) {
    parts.push(`${d.now} ${d.kind}(s) where the reference has ${d.reference} (${d.names.join(", ")})`);
  }
  if (comparison.missing.length > 0) parts.push(`missing ${comparison.missing.join(", ")}`);
  if (comparison.diffs.length > 0) {
    parts.push(`${comparison.diffs.length} managed field(s) differ from the reference`);
  }
  if (comparison.regenerated.length > 0) {
    parts.push(`generated once per life but written anew: ${comparison.regenerated.join("; ")}`);
  }
  return parts.join("; ");
}

/** What a comparison knows of the scenario beyond its live children. */
export interface EndStateContext {
  /** The roles the spec's reference learned (absent in observations recorded before them: names then compare normalised). */
  readonly roles?: ChildRoles;
  /** The scenario's writes (changedPaths): whether a per-life value was written anew. */
  readonly writes?: readonly WriteEntry[];
  /**
   * Which fields compare: the drift suite's targets (the default: what a
   * drift repair must restore), or every field the operator manages on
   * either side (managedFieldPairs: what an update must carry out as a
   * creation does, and what a fault must not lose). Either way a value
   * generated once per life at a drift target is judged as kept or
   * written anew when the scenario's `writes` are given.
   */
  readonly fields?: "drift-targets" | "operator-managed";
  /**
   * With operator-managed fields, the spec-0 reference's children: the
   * lives the per-life values were learned from. Two values at a path those
   * lives never had (a later spec's child, or a field only a later spec
   * sets) may be generated per life, unseen: they are undecided, never a
   * failure. Without it every such difference counts.
   */
  readonly learnedFrom?: readonly ReferenceChild[];
  /**
   * The contract's clock horizon (clock.horizon): every life then holds the
   * ticks due by it, and the children the clock made are counted per
   * family; without one they are left out.
   */
  readonly clockHorizonMs?: number | undefined;
}

/**
 * Compares the children the operator created in a scenario (those that still
 * exist, as observed) with the children of a spec's reference: matched by
 * role (child-roles.ts: their names, the life's identity read as such), the
 * fields the operator manages compared on the drift suite's targets (the
 * values the operator sets, not what servers default or controllers add),
 * and counted per kind. A value the two reference lives show is generated
 * once per life is not compared with the reference's but with what the
 * operator wrote it as in this life: it must have kept it. Pure.
 */
export function compareEndStates(
  liveChildren: readonly LiveChild[],
  referenceChildren: readonly ReferenceChild[],
  drift: Contract["drift"],
  context: EndStateContext = {},
): EndStateComparison {
  const { roles } = context;
  // The order of a keyed list (a Service's ports, a container's env) means nothing: both sides
  // compare in key order (keyed-lists.ts), as the scenario read them (liveChildObjects).
  const inKeyOrder = <C extends { readonly object: unknown }>(c: C): C => ({
    ...c,
    object: canonicalOrder(c.object),
  });
  const match = (c: ChildRecord) => roleOf(roles, c.ref.kind, c.ref.name);
  const key = (c: ChildRecord) => roleKey(roles, c.ref.kind, c.ref.name);
  // What the operator's clock made is another tick's in each life: never compared field by field
  // (clock-children.ts); within a clock horizon, counted per family.
  const clock = clockChildrenApart(liveChildren, referenceChildren, context.writes ?? [], {
    // Within a horizon every life waits for the ticks due by then; they are counted, not left out.
    beyondReference: context.clockHorizonMs === undefined && roles?.clockPending === true,
    hasRole: (c) => match(c).status === "role",
  });
  const live = clock.live.map(inKeyOrder);
  const reference = clock.reference.map(inKeyOrder);
  const clockMade = clock.notes;
  const suspicion = context.clockHorizonMs === undefined && roles?.clockPending === true;
  const mayBeTick = (c: ChildRecord) => suspicion && childNamedLikeATick(c, roles);
  const ticksUndecided: string[] = [];
  const clockCounts =
    context.clockHorizonMs === undefined
      ? { missing: [], duplicates: [] }
      : countByFamily(clock.liveByClock, clock.referenceByClock);
  const referenceKeys = new Set(reference.map(key));
  // Live children no role of the reference names: candidates for a reference child nobody paired.
  const strays = live.filter((c) => match(c).status !== "role" && !referenceKeys.has(key(c)));
  const referenceNames = scenarioSubstitutions(
    roles,
    reference.map((c) => c.ref),
  );
  const liveNames = scenarioSubstitutions(
    roles,
    live.map((c) => c.ref),
  );
  const referenceNamespace = lifeNamespace(reference);
  const liveNamespace = lifeNamespace(live);
  const missing: string[] = [];
  const unpaired: { reference: string; live: string[]; why: string }[] = [];
  const diffs: NonNullable<Evidence["diffs"]>[number][] = [];
  const unlearnedDiffs: NonNullable<Evidence["diffs"]>[number][] = [];
  const regenerated: string[] = [];
  for (const expected of reference) {
    const now = live.find((c) => key(c) === key(expected));
    const m = match(expected);
    const role = m.status === "role" ? m.role : undefined;
    if (!now) {
      // A name learned as fixed that is not here is missing; one that may vary may be a stray's.
      const sameKind = strays.filter((c) => c.ref.kind === expected.ref.kind);
      const why = sameKind.length > 0 ? whyUnpairable(roles, expected, role, sameKind) : undefined;
      if (why !== undefined) {
        unpaired.push({
          reference: key(expected),
          live: sameKind.map((c) => `${c.ref.kind}/${c.ref.name}`),
          why,
        });
      } else if (mayBeTick(expected)) ticksUndecided.push(`missing ${key(expected)}`);
      else missing.push(key(expected));
      continue;
    }
    // The per-life values as positions in each object: a later spec's lists may hold more or fewer.
    const expectedPerLife = perLifeIn(role, expected.object).perLife;
    const comparable = (
      child: ChildRecord & { readonly object: unknown },
      names: readonly (readonly [string, string])[],
      namespace: string,
    ) =>
      maskPerLife(
        lifeValue(child.object, child.ref.namespace || namespace, names),
        perLifeIn(role, child.object).perLife,
      );
    const expectedValues = comparable(expected, referenceNames, referenceNamespace);
    const actualValues = comparable(now, liveNames, liveNamespace);
    const judgedAnew = new Set<string>();
    const judgeAnew = (path: ValuePath) => {
      // The same element in this life's child; none there: the list's diff shows it.
      const here = relocated(path, expected.object, now.object);
      if (!here || judgedAnew.has(formatPath(here))) return;
      judgedAnew.add(formatPath(here));
      const anew = regeneration(now, role, here, context.writes ?? []);
      if (anew) {
        regenerated.push(
          `${key(expected)} ${shownPath(path, expected.object)}: changed by write ${anew.change.seq} after its create${anew.created === undefined ? "" : ` (write ${anew.created})`}, though two fault-free lives show it is generated once per life`,
        );
      }
    };
    if (context.fields === "operator-managed") {
      const actualPerLife = perLifeIn(role, now.object).perLife;
      const learned =
        context.learnedFrom && childOfRole(roles, context.learnedFrom, expected.ref.kind, expected.ref.name);
      for (const pair of managedFieldPairs(expected.object, now.object)) {
        const perLife =
          (pair.expected !== undefined && isPerLife(expectedPerLife, pair.expected)) ||
          (pair.actual !== undefined && isPerLife(actualPerLife, pair.actual));
        if (perLife) continue;
        const wanted = pair.expected && valueAt(expectedValues, pair.expected);
        const actual = pair.actual && valueAt(actualValues, pair.actual);
        if (isDeepStrictEqual(actual, wanted)) continue;
        const path = formatObjectPath(pair.path);
        const diff = {
          object: key(expected),
          path,
          expected:
            pair.expected &&
            shownValue(expected.ref.kind, pair.expected, valueAt(expected.object, pair.expected)),
          actual: pair.actual && shownValue(expected.ref.kind, pair.actual, valueAt(now.object, pair.actual)),
        };
        // Two values where the learning lives had none: perhaps a value generated per life, unseen.
        const unlearned =
          context.learnedFrom !== undefined &&
          wanted !== undefined &&
          actual !== undefined &&
          (learned === undefined ||
            learned === "ambiguous" ||
            positionsIn(pair.path, learned.object) === undefined);
        (unlearned ? unlearnedDiffs : diffs).push(diff);
      }
    }
    const named = {
      kind: expected.ref.kind,
      object: expected.object,
      // The contract's include and exclude name it as its role does, in every life.
      ...(role ? { name: role.name } : {}),
      ...(role?.template ? { template: role.template } : {}),
    };
    for (const target of driftTargets(named, drift)) {
      const shown = (value: unknown) => shownValue(expected.ref.kind, target.path, value);
      if (isPerLife(expectedPerLife, target.path)) {
        judgeAnew(target.path);
        continue;
      }
      // A target that holds generated values (an env list with one generated variable) compares
      // with them masked; each is judged on its own, as kept or written anew.
      for (const inner of perLifeWithin(expectedPerLife, target.path)) judgeAnew(inner);
      // Every managed field was compared above; the targets still judge what is generated per life.
      if (context.fields === "operator-managed") continue;
      const actual = valueAt(actualValues, target.path);
      const wanted = valueAt(expectedValues, target.path);
      if (!isDeepStrictEqual(actual, wanted)) {
        diffs.push({
          object: key(expected),
          path: formatPath(target.path),
          expected: shown(valueAt(expected.object, target.path)),
          actual: shown(valueAt(now.object, target.path)),
        });
      }
    }
  }
  const count = (list: readonly ChildRecord[]) => {
    const byKind = new Map<string, ChildRecord[]>();
    for (const c of list) byKind.set(c.ref.kind, [...(byKind.get(c.ref.kind) ?? []), c]);
    return byKind;
  };
  const expectedCounts = count(reference.filter((c) => !mayBeTick(c)));
  const duplicates = [...count(live.filter((c) => !mayBeTick(c)))]
    .filter(([kind, now]) => now.length > (expectedCounts.get(kind)?.length ?? 0))
    .map(([kind, now]) => ({
      kind,
      reference: expectedCounts.get(kind)?.length ?? 0,
      now: now.length,
      names: now.map((c) => c.ref.name),
    }));
  const tickKeys = new Set(reference.filter(mayBeTick).map(key));
  const tickDiffs = diffs.filter((d) => tickKeys.has(d.object));
  const ticks = countByFamily(live.filter(mayBeTick), reference.filter(mayBeTick));
  ticksUndecided.push(
    ...ticks.duplicates.map(
      (d) =>
        `${d.now} ${d.kind.replace(/^clock-made /, "")}(s) of one family here where the reference has ${d.reference} (${d.names.join(", ")})`,
    ),
    ...(tickDiffs.length > 0
      ? [`${tickDiffs.map((d) => `${d.object} ${d.path}`).join(", ")} differ from the reference`]
      : []),
  );
  const judgedDiffs = diffs.filter((d) => !tickKeys.has(d.object));
  // With one reference life nothing is known to be generated per life: a difference may be one.
  const undecided = roles?.oneLife ? [...judgedDiffs, ...unlearnedDiffs] : [];
  return {
    missing: [...missing, ...clockCounts.missing],
    duplicates: [...duplicates, ...clockCounts.duplicates],
    diffs: roles?.oneLife ? [] : judgedDiffs,
    regenerated,
    unpaired,
    undecided,
    unlearned: roles?.oneLife ? [] : unlearnedDiffs,
    children: liveChildren,
    clockMade,
    ticksUndecided,
  };
}

/**
 * Why a reference child with no live child of its role may still be one of
 * the live children of its kind that no role names (`strays`), or
 * undefined when it is plainly missing: a name both reference lives had,
 * absent here, is missing whatever else is there.
 */
function whyUnpairable(
  roles: ChildRoles | undefined,
  expected: ChildRecord,
  role: ChildRole | undefined,
  strays: readonly ChildRecord[],
): string | undefined {
  const { kind } = expected.ref;
  const name = normalisedName({ name: expected.ref.name });
  if (role?.template) {
    return `its name varies with the life (${describeTemplate(role.template)} in two fault-free lives), and no child here fits that`;
  }
  const ambiguous = strays.find((c) => roleOf(roles, kind, c.ref.name).status === "ambiguous");
  if (ambiguous) return `${kind}/${ambiguous.ref.name} fits the names of more than one role`;
  if (roles?.oneLife)
    return `${roles.oneLife}, so the kit could not learn whether ${kind} names vary with the life`;
  // A child with no role, of a kind whose names the lives could not pair: one of those names, or a
  // later spec's (its life has names of its own, which the spec-0 lives never showed).
  const unpaired = role === undefined ? roles?.unpaired.find((u) => u.kind === kind) : undefined;
  if (unpaired) return unpaired.why;
  if (roles !== undefined && role === undefined) {
    // A child the reference lives the roles were learned from did not have (a later spec's):
    // whether its name varies is unknown; a live one whose name shares its fixed text may be it.
    const related = strays.find((c) => {
      const template = templateOf(name, normalisedName({ name: c.ref.name }));
      return template !== undefined && template.prefix.length + template.suffix.length > 0;
    });
    if (related) {
      return `the reference lives the roles were learned from had no ${kind}/${name}, so whether its name varies with the life is not known, and ${kind}/${related.ref.name} shares its fixed text`;
    }
  }
  return undefined;
}

/**
 * The namespace a life's children read as `<namespace>` when they have none
 * of their own (a ClusterRoleBinding whose subject is the life's
 * ServiceAccount): the one most of its namespaced children are in, which is
 * the life's own; "" when none is namespaced. A namespaced child reads with
 * its own namespace.
 */
export function lifeNamespace(children: readonly ChildRecord[]): string {
  const counts = new Map<string, number>();
  for (const c of children) {
    if (c.ref.namespace) counts.set(c.ref.namespace, (counts.get(c.ref.namespace) ?? 0) + 1);
  }
  let best = "";
  for (const [namespace, count] of counts) if (count > (counts.get(best) ?? 0)) best = namespace;
  return best;
}

/**
 * Whether this life's operator wrote a per-life value anew: changed it
 * (the write log's changedPaths) after the child's create more often than
 * the reference lives show it fills it in (ChildRole.setAfterCreate: once).
 * Changes after a kit write to the object are repairs, not counted.
 */
function regeneration(
  child: LiveChild,
  role: ChildRole | undefined,
  path: readonly (string | number)[],
  writes: readonly WriteEntry[],
): { change: WriteEntry; created: number | undefined } | undefined {
  const written = { group: child.group, resource: child.resource, name: child.ref.name, uid: child.uid };
  const changes = changesAfterCreate(writes, written, path, child.object);
  // One change is its generation when the reference lives fill it in after the create, or when
  // this life's create left it unset (a stale view can make an operator create first and fill in later).
  const filledIn =
    isPerLife(perLifeIn(role, child.object).setAfterCreate, path) ||
    createdWithout(writes, written, path) === true;
  const change = changes[filledIn ? 1 : 0];
  if (!change) return undefined;
  return { change, created: writesOfChild(writes, written).created?.seq };
}
