import { evaluateReadiness, type Readiness } from "../../contract/readiness.js";
import { unpairedResource, writeKey, type ChildRoles } from "../../scenario/child-roles.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import { clockFamilies, clockFamily } from "../../scenario/clock-marks.js";
import { namedLikeATick } from "./clock-children.js";
import type { SpecWrite } from "../../scenario/scenario.js";
import { observedGenerationOf } from "../../contract/observed-generation.js";
import { asRecord } from "../../util/records.js";

/**
 * What a status write says, read from its request body: the generation its
 * conclusions name, and whether it says Ready by the contract's predicate.
 * Pure: the conflict suite reads the write log in order with it.
 */
export interface StatusClaim {
  /**
   * The generation the conclusions are about: the one the status names (the
   * Ready or Available condition's observedGeneration, else
   * status.observedGeneration), else, for a write that sends the whole
   * object (UpdateStatus of an object it read), that object's
   * metadata.generation: the generation the writer had read.
   */
  readonly generation?: number;
  /** Whether `generation` is one the status itself names (not inferred from metadata). */
  readonly named: boolean;
  readonly ready: boolean;
}

/** The custom resource and its group, to tell status writes from child writes. */
export interface CustomResourceKind {
  readonly group: string;
  readonly resource: string;
}

/** Whether an entry writes the custom resource's status (the status subresource, or a main-resource write with a status). */
export function isStatusWrite(entry: WriteEntry, cr: CustomResourceKind): boolean {
  if (entry.group !== cr.group || entry.resource !== cr.resource) return false;
  if (entry.subresource === "status") return true;
  return !entry.subresource && entry.verb !== "create" && asRecord(entry.body).status !== undefined;
}

/**
 * What a status write body claims: "Ready for generation G", the body
 * evaluated by the contract's predicate as if G were the object's
 * generation. `quiet` readiness has no predicate: nothing is ever claimed.
 */
export function statusClaim(readiness: Readiness, body: unknown): StatusClaim {
  const object = asRecord(body);
  const named = observedGenerationOf(body);
  const generation = named ?? wholeNumber(asRecord(object.metadata).generation);
  const about = {
    named: named !== undefined,
    ...(generation === undefined ? {} : { generation }),
  };
  if (readiness.kind === "quiet" || body === undefined) return { ready: false, ...about };
  const asClaimed =
    generation === undefined ? object : { ...object, metadata: { ...asRecord(object.metadata), generation } };
  let ready = false;
  try {
    ready = evaluateReadiness(readiness, asClaimed).ready;
  } catch {
    // A body the predicate cannot read (a partial patch) claims nothing.
  }
  return { ready, ...about };
}

function wholeNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) ? value : undefined;
}

/**
 * What setting spec `spec` caused in a reference: the operator's creates
 * and effective updates of objects other than the custom resource, in the
 * reference's namespace or cluster-scoped, after
 * the kit's write of that spec and before the next one, in order, but for
 * those its clock made (clock-writes.ts). A RangeError when the reference
 * never set that spec.
 */
export function childWritesOfSpec(
  reference: {
    readonly namespace: string;
    readonly writes: readonly WriteEntry[];
    readonly specWrites: readonly SpecWrite[];
    readonly roles?: ChildRoles | undefined;
  },
  spec: number,
  cr: CustomResourceKind,
): WriteEntry[] {
  const from = reference.specWrites.find((w) => w.spec === spec)?.seq;
  if (from === undefined) throw new RangeError(`the reference has no write of spec ${spec}`);
  const until = reference.specWrites.find((w) => w.spec === spec + 1)?.seq ?? Number.POSITIVE_INFINITY;
  // What the clock made, and its kin a tick made while the operator was busy with other news.
  const families = clockFamilies(reference.writes);
  return reference.writes.filter(
    (entry) =>
      entry.seq > from &&
      entry.seq < until &&
      entry.actor === "operator" &&
      // The life's own namespace (or cluster-scoped): what the operator writes elsewhere (its
      // manager's records in its own namespace) is not the sample's child.
      (entry.namespace === undefined || entry.namespace === reference.namespace) &&
      !entry.tag &&
      // What the clock made (a schedule's tick) is no answer to the spec.
      !entry.clock &&
      !families.has(clockFamily(entry) ?? "") &&
      // Ended with the clock's work pending, a tick may have fallen inside the answer's reconcile.
      !(reference.roles?.clockPending && tickLike(entry, reference.roles)) &&
      !entry.subresource &&
      !(entry.group === cr.group && entry.resource === cr.resource) &&
      (entry.effect === "created" || entry.effect === "changed"),
  );
}

/** The children that spec `spec` needed written: childWritesOfSpec, the first per role (writeKey). */
export function requiredChildWrites(
  reference: {
    readonly namespace: string;
    readonly writes: readonly WriteEntry[];
    readonly specWrites: readonly SpecWrite[];
    readonly roles?: ChildRoles;
  },
  spec: number,
  cr: CustomResourceKind,
): Map<string, WriteEntry> {
  const required = new Map<string, WriteEntry>();
  for (const entry of childWritesOfSpec(reference, spec, cr)) {
    const key = writeKey(reference.roles, entry);
    if (!required.has(key)) required.set(key, entry);
  }
  return required;
}

/** A status write that said Ready for a generation before the child writes that generation's spec needs. */
export interface EarlyReadyClaim {
  readonly claim: WriteEntry;
  readonly generation: number;
  readonly spec: number;
  /** childKeys the spec needs written that had not been written since the spec was set. */
  readonly missing: readonly string[];
}

/**
 * Reads a scenario's writes in order and finds every successful status
 * write that claims Ready for generation G before the operator wrote each
 * child that G's spec needs (per the reference). G is mapped to a spec by
 * the kit's spec writes of the scenario (the latest one before the claim
 * with that generation); a claim whose generation is unknown (a partial
 * status patch naming none), or one no spec write produced, is not judged
 * (counted in `unjudged`).
 */
export function earlyReadyClaims(input: {
  readonly writes: readonly WriteEntry[];
  /** The scenario's kit writes that set a spec, with the generation each produced. */
  readonly specWrites: readonly SpecWrite[];
  readonly required: (spec: number) => ReadonlyMap<string, WriteEntry>;
  readonly readiness: Readiness;
  readonly cr: CustomResourceKind;
  /** Which child is which across lives: the scenario's writes key as the reference's. */
  readonly roles?: ChildRoles;
}): { readonly early: EarlyReadyClaim[]; readonly claims: number; readonly unjudged: number } {
  const early: EarlyReadyClaim[] = [];
  let claims = 0;
  let unjudged = 0;
  for (const claim of input.writes) {
    if (claim.actor !== "operator" || claim.code < 200 || claim.code >= 300) continue;
    if (!isStatusWrite(claim, input.cr)) continue;
    const said = statusClaim(input.readiness, claim.body);
    if (!said.ready) continue;
    claims++;
    const set = input.specWrites.filter((w) => w.seq < claim.seq && w.generation === said.generation).at(-1);
    if (said.generation === undefined || !set) {
      unjudged++;
      continue;
    }
    const done = new Set(
      input.writes
        .filter(
          (w) =>
            w.actor === "operator" &&
            w.seq > set.seq &&
            w.seq < claim.seq &&
            !w.subresource &&
            (w.effect === "created" || w.effect === "changed"),
        )
        .map((w) => writeKey(input.roles, w)),
    );
    const required = [...input.required(set.spec)];
    // A child whose name the reference lives could not pair cannot be told written or not here.
    if (required.some(([key, w]) => !done.has(key) && unpairedResource(input.roles, w))) {
      unjudged++;
      continue;
    }
    const missing = required.map(([key]) => key).filter((key) => !done.has(key));
    if (missing.length > 0) early.push({ claim, generation: said.generation, spec: set.spec, missing });
  }
  return { early, claims, unjudged };
}

/** A write's object is named as a tick is (namedLikeATick); a generateName create is never (its suffix is the server's). */
function tickLike(entry: WriteEntry, roles: ChildRoles | undefined): boolean {
  return (
    entry.name !== undefined && !entry.generateName && namedLikeATick({ ...entry, name: entry.name }, roles)
  );
}
