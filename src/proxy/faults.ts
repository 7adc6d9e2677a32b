import type { PatchType } from "../kube/patch-types.js";
import { matchesObject, type MatchableObject, type ObjectMatch } from "./object-matcher.js";
import { matchesWrite, type WriteEntry, type WriteLog } from "./write-log.js";

/**
 * Which write a fault acts on. The identity fields of ObjectMatch narrow the
 * candidates; then one of two counts picks the write:
 * - `nth`: the nth candidate the fault could act on (default 1);
 * - `ordinal`: the write that is, or would be, the k-th *counted* operator
 *   write in scope: successful, Events, Leases, reviews and dry runs left out, no-ops
 *   too when `excludeNoOps`. With the scope to a namespace and no identity
 *   filter, ordinals number a scenario's write sequence, so a suite can
 *   replay a baseline position by position. A fault that acts before the
 *   write (mutate-before, conflict-before, fail-with) cannot know whether it
 *   will turn out a no-op: it takes the next write in scope once k-1 were
 *   counted, and `expect` tells whether that was the baseline's k-th.
 */
export interface WriteMatch extends ObjectMatch {
  readonly nth?: number;
  readonly ordinal?: number;
  /** With `ordinal`: writes the server found to change nothing are not counted. */
  readonly excludeNoOps?: boolean;
  /** Only writes after this sequence number count and match. */
  readonly afterSeq?: number;
}

/** A baseline write a fault is meant to hit: compared with the write it did hit. */
export type ExpectedWrite = Pick<
  WriteEntry,
  "verb" | "group" | "resource" | "subresource" | "name" | "generateName"
>;

/** The identity of a baseline write, as a fault's `expect`. */
export function expectedWrite(write: WriteEntry): ExpectedWrite {
  return {
    verb: write.verb,
    group: write.group,
    resource: write.resource,
    ...(write.subresource ? { subresource: write.subresource } : {}),
    ...(write.name ? { name: write.name } : {}),
    ...(write.generateName ? { generateName: write.generateName } : {}),
  };
}

/** The kit's own write that `mutate-before` makes. */
export type Mutation =
  /** An annotation with a fresh random value (default key CONCURRENT_WRITE_ANNOTATION). */
  | { readonly kind: "annotate"; readonly key?: string }
  /** A given patch, such as a spec change of the custom resource. */
  | { readonly kind: "patch"; readonly patchType: PatchType; readonly patch: unknown };

/** The object `mutate-before` writes: the one the operator is writing, or another. */
export type MutationTarget =
  | "written-object"
  | {
      readonly group: string;
      readonly version: string;
      readonly resource: string;
      readonly namespace?: string;
      readonly name: string;
    };

export type FaultSpec =
  /** Forward; once the API server answered 2xx, kill the operator and drop the answer. */
  | {
      readonly kind: "crash-after";
      readonly match: WriteMatch;
      /**
       * Act only on an answered write this accepts (what the write is: its
       * object's role, for a status write what it claims); with `nth`, the
       * nth such counted write. Others are not candidates.
       */
      readonly select?: (entry: WriteEntry) => boolean;
      readonly expect?: ExpectedWrite;
    }
  /**
   * Before forwarding, the kit writes the target itself; then the operator's
   * request goes through as it was sent. A write with a precondition gets a
   * real 409; one without shows whether it erases the kit's change.
   */
  | {
      readonly kind: "mutate-before";
      readonly match: WriteMatch;
      readonly mutation: Mutation;
      /** Default: the object the operator is writing. */
      readonly target?: MutationTarget;
      /** Act only on a write that carries a precondition (others are not candidates). */
      readonly onlyWithPrecondition?: boolean;
      /**
       * Act only on a write whose parsed body (JSON or YAML; undefined for
       * protobuf) satisfies this, such as a status write that claims Ready.
       * Others are not candidates.
       */
      readonly when?: (body: unknown) => boolean;
      readonly expect?: ExpectedWrite;
    }
  /** mutate-before with an annotation on the written object, on a write with a precondition: a real 409. */
  | { readonly kind: "conflict-before"; readonly match: WriteMatch; readonly expect?: ExpectedWrite }
  /** Answer without forwarding: a status (500, 429 with Retry-After) or a hang until the client gives up. */
  | {
      readonly kind: "fail-with";
      readonly match: WriteMatch;
      readonly status: number | "hang";
      readonly retryAfterSeconds?: number;
      readonly expect?: ExpectedWrite;
    };

/** What crash-after killed. */
export interface KillRecord {
  /** How: "SIGKILL" to a process group, or the deletion of a Pod. */
  readonly signal: string;
  /** The local processes killed (none for an operator in a Pod). */
  readonly pids: readonly number[];
  /** The operator's Pod deleted (deployed mode). */
  readonly pod?: string;
  /** The operator's run that was killed. */
  readonly run?: number;
}

/** Proof that a fault acted, for the report. */
export interface FaultEvidence {
  /** The operator write it acted on. */
  readonly hit: WriteEntry;
  /** mutate-before: the kit's own write and its answer. */
  readonly kitWrite?: WriteEntry;
  /** crash-after: the kill. */
  readonly kill?: KillRecord;
  /** crash-after: operator writes dropped while the crash was under way (their sequence numbers). */
  readonly dropped?: readonly number[];
}

/** Whether a fault hit the write it was meant for. */
export type FaultOutcome =
  | { readonly status: "reached"; readonly evidence: FaultEvidence }
  | {
      readonly status: "diverged";
      readonly evidence: FaultEvidence;
      readonly expected: ExpectedWrite;
    }
  | { readonly status: "not-reached"; readonly expected?: ExpectedWrite }
  /** It matched a write but could not act (its own write or the kill failed). */
  | { readonly status: "failed"; readonly error: string };

/** What happened when a fault acted. */
export interface FiredFault {
  readonly spec: FaultSpec;
  /** Sequence number of the write it acted on. */
  readonly seq: number;
  readonly outcome: Extract<FaultOutcome, { status: "reached" | "diverged" }>;
}

/** A fault the proxy is acting with: it reports the outcome. */
export interface TakenFault {
  readonly spec: FaultSpec;
  readonly id: string;
  fire(evidence: FaultEvidence): void;
  /** The fault could not act: `fired` rejects, the outcome is `failed`. */
  fail(error: unknown): void;
}

/** One armed fault: fires once, reports when it did. */
export interface ArmedFault {
  readonly id: string;
  readonly spec: FaultSpec;
  /** Resolves when the fault has acted (for crash-after: after the kill); rejects if it could not. */
  readonly fired: Promise<FiredFault>;
  /** Where it stands now: `not-reached` until it acted. */
  outcome(): FaultOutcome;
  /** Removes it without firing; `fired` never resolves then. */
  disarm(): void;
}

/** A write a fault may act on: its identity, and for the counting, where it stands. */
export interface FaultCandidate extends MatchableObject {
  readonly actor: "operator" | "kit";
  readonly hasPrecondition: boolean;
  /**
   * False for writes that never count toward an ordinal (Events, Leases,
   * reviews, dry runs): an ordinal fault never acts on them.
   */
  readonly countable: boolean;
  /** The parsed request body (undefined for protobuf), for `mutate-before`'s `when`. */
  readonly body?: unknown;
}

interface Slot {
  readonly id: string;
  readonly spec: FaultSpec;
  seen: number;
  active: boolean;
  outcome: FaultOutcome;
  resolve: (fired: FiredFault) => void;
  reject: (error: unknown) => void;
}

/** The moment a fault acts: before the write is forwarded, or after its answer. */
export type FaultPhase = "before" | "after";

export function phaseOf(spec: FaultSpec): FaultPhase {
  return spec.kind === "crash-after" ? "after" : "before";
}

/**
 * The faults armed on a proxy. The proxy asks `takeBefore` for every
 * operator write before it forwards it, and `takeAfter` once it is answered
 * and logged; each fault acts at most once.
 */
export class FaultPlan {
  private readonly slots: Slot[] = [];
  private nextId = 1;

  constructor(private readonly log: WriteLog) {}

  arm(spec: FaultSpec): ArmedFault {
    let resolve!: (fired: FiredFault) => void;
    let reject!: (error: unknown) => void;
    const fired = new Promise<FiredFault>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Nobody may be waiting when a fault fails; that is not an unhandled rejection.
    fired.catch(() => undefined);
    const id = `${spec.kind}#${this.nextId++}`;
    const slot: Slot = {
      id,
      spec,
      seen: 0,
      active: true,
      outcome: { status: "not-reached", ...(spec.expect ? { expected: spec.expect } : {}) },
      resolve,
      reject,
    };
    this.slots.push(slot);
    return {
      id,
      spec,
      fired,
      outcome: () => slot.outcome,
      disarm: () => {
        slot.active = false;
      },
    };
  }

  /** The fault that acts on this write before it is forwarded, if any; it is spent. */
  takeBefore(candidate: FaultCandidate): TakenFault | undefined {
    if (candidate.actor !== "operator") return undefined;
    return this.take("before", candidate, (slot) => {
      const { spec } = slot;
      if (spec.kind === "conflict-before" && !candidate.hasPrecondition) return false;
      if (spec.kind === "mutate-before" && spec.onlyWithPrecondition && !candidate.hasPrecondition)
        return false;
      if (spec.kind === "mutate-before" && spec.when && !spec.when(candidate.body)) return false;
      // The write about to be sent would be the next counted one.
      if (spec.match.ordinal === undefined) return true;
      return candidate.countable && this.counted(spec.match) === spec.match.ordinal - 1;
    });
  }

  /** The fault that acts on this answered write (not yet logged), if any; it is spent. */
  takeAfter(entry: WriteEntry): TakenFault | undefined {
    if (entry.actor !== "operator" || entry.code < 200 || entry.code >= 300) return undefined;
    return this.take("after", entry, (slot) => {
      const { spec } = slot;
      const { match } = spec;
      if (spec.kind === "crash-after" && spec.select) {
        return countsToward(match, entry) && spec.select(entry);
      }
      if (match.ordinal === undefined) return true;
      return countsToward(match, entry) && this.counted(match) + 1 === match.ordinal;
    });
  }

  /** Faults still waiting for their write. */
  get pending(): FaultSpec[] {
    return this.slots.filter((s) => s.active).map((s) => s.spec);
  }

  private take(
    phase: FaultPhase,
    candidate: MatchableObject & { seq?: number },
    eligible: (slot: Slot) => boolean,
  ): TakenFault | undefined {
    for (const slot of this.slots) {
      const { spec } = slot;
      if (!slot.active || phaseOf(spec) !== phase) continue;
      if (!matchesObject(spec.match, candidate)) continue;
      if (
        spec.match.afterSeq !== undefined &&
        candidate.seq !== undefined &&
        candidate.seq <= spec.match.afterSeq
      )
        continue;
      if (!eligible(slot)) continue;
      slot.seen++;
      if (spec.match.ordinal === undefined && slot.seen < (spec.match.nth ?? 1)) continue;
      slot.active = false;
      return {
        spec,
        id: slot.id,
        fire: (evidence) => {
          const outcome = judgeOutcome(spec.expect, evidence);
          slot.outcome = outcome;
          slot.resolve({ spec, seq: evidence.hit.seq, outcome });
        },
        fail: (error) => {
          slot.outcome = { status: "failed", error: error instanceof Error ? error.message : String(error) };
          slot.reject(error);
        },
      };
    }
    return undefined;
  }

  /** How many logged writes count toward `match.ordinal` so far. */
  private counted(match: WriteMatch): number {
    return this.log.query({ after: match.afterSeq }).filter((e) => countsToward(match, e)).length;
  }
}

/** Whether a logged write counts toward an ordinal: a successful operator write in scope. */
export function countsToward(match: WriteMatch, entry: WriteEntry): boolean {
  const { verb: _verb, name: _name, ...scope } = match;
  return (
    matchesWrite({ ...scope, actor: "operator", withoutTags: true, succeeded: true }, entry) &&
    !entry.dryRun &&
    !(match.excludeNoOps && entry.effect === "no-op")
  );
}

function judgeOutcome(
  expected: ExpectedWrite | undefined,
  evidence: FaultEvidence,
): Extract<FaultOutcome, { status: "reached" | "diverged" }> {
  if (!expected || sameWrite(expected, evidence.hit)) return { status: "reached", evidence };
  return { status: "diverged", evidence, expected };
}

/**
 * Whether the write a fault hit is the baseline write it was meant to hit:
 * same kind, verb and subresource, and the same name once names derived from
 * a UID or generateName are normalised (those differ from run to run).
 */
export function sameWrite(expected: ExpectedWrite, hit: ExpectedWrite): boolean {
  return (
    expected.verb === hit.verb &&
    expected.group === hit.group &&
    expected.resource === hit.resource &&
    (expected.subresource ?? "") === (hit.subresource ?? "") &&
    normalisedName(expected) === normalisedName(hit)
  );
}

const UID_PATTERN = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** A value with every UID in its strings replaced by `<uid>`: values derived from a scenario's UIDs compare across scenarios. */
export function withoutUids(value: unknown): unknown {
  if (typeof value === "string") return value.replace(UID_PATTERN, "<uid>");
  if (Array.isArray(value)) return value.map(withoutUids);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withoutUids(item)]));
  }
  return value;
}

/** "deployments.apps/web": a written object's resource and normalised name, the same in every namespace. */
export function normalisedKey(
  write: Pick<WriteEntry, "group" | "resource" | "name" | "generateName">,
): string {
  return `${write.group ? `${write.resource}.${write.group}` : write.resource}/${normalisedName(write)}`;
}

/** A name with UIDs replaced by `<uid>` and a generateName suffix by `*`. */
export function normalisedName(write: Pick<WriteEntry, "name" | "generateName">): string {
  if (write.generateName) return `${write.generateName.replace(UID_PATTERN, "<uid>")}*`;
  return (write.name ?? "").replace(UID_PATTERN, "<uid>");
}
