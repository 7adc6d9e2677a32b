import type { WriteEntry } from "../../proxy/write-log.js";
import { writeKey, type ChildRoles } from "../../scenario/child-roles.js";
import type { DeletionRecord } from "../../scenario/deletion.js";
import { liveChildObjects, writeEvidence } from "../../scenario/reference-state.js";
import type { Scenario } from "../../scenario/scenario.js";
import type { SpecReference } from "../../scenario/spec-references.js";
import type { Evidence } from "../../report/report-model.js";
import type { Judgement, Skip, TargetContext } from "../check.js";

// What the deletion suite's checks share (not a check itself): the
// reference's deletion, what its cleanup removes, and the judgement of how
// a deletion ended.

/** The spec-0 reference's deletion, with the roles to find its objects in another life. */
export interface DeletionReference {
  readonly deletion: DeletionRecord;
  /** The roles (writeKey) of what the reference's cleanup deleted: what every deletion must remove. */
  readonly cleanup: readonly string[];
  readonly roles?: ChildRoles;
}

/** The reference's deletion, or the Skip that says why there is none to test. */
export function deletionReference({
  references,
  contract,
}: TargetContext): DeletionReference | Skip | undefined {
  const reference = references.get(0);
  if (!reference) return undefined;
  const { deletion } = reference;
  if (!deletion) {
    return {
      target: "deletion",
      skip: "the custom resource carries no finalizer of the operator's: its deletion and its children's are the garbage collector's, with nothing of the operator's to crash, fail or resume",
    };
  }
  return {
    deletion,
    cleanup: cleanupRoles(reference, contract.customResource),
    ...(reference.roles ? { roles: reference.roles } : {}),
  };
}

/** The roles of the objects the operator deleted while the reference's custom resource was terminating. */
function cleanupRoles(
  reference: SpecReference,
  customResource: { readonly group: string; readonly resource: string },
): string[] {
  const { deletion, roles } = reference;
  return [
    ...new Set(
      (deletion?.writes ?? [])
        .filter((w) => w.verb === "delete" && w.code >= 200 && w.code < 300 && !w.subresource)
        .filter((w) => w.group !== customResource.group || w.resource !== customResource.resource)
        .map((w) => writeKey(roles, w)),
    ),
  ];
}

/** How one scenario's deletion ended. */
export interface DeletionEnd {
  readonly deleteSeq: number;
  /** Set when the custom resource was still there at the deadline: what was left. */
  readonly stuck?: string;
  /** The operator's writes after the kit's delete. */
  readonly writes: readonly WriteEntry[];
  /** Objects of the cleanup's roles the operator created in this scenario that still exist. */
  readonly leftovers: readonly string[];
  readonly operatorLog: readonly string[];
  /**
   * The resourceVersions the custom resource had before the kit's delete
   * (absent in observations recorded before it was kept: then no create is
   * excused by createsFromAViewBeforeTheDelete).
   */
  readonly versionsBeforeDelete?: readonly string[];
  /**
   * The deleted custom resource's name: only its own writes show the
   * operator's view of it (absent in observations recorded before it was
   * kept: then every write of its kind in the namespace counts).
   */
  readonly customResourceName?: string;
}

/** Which custom resource a deletion is of: the contract's group and plural resource. */
export interface CustomResourceKind {
  readonly group: string;
  readonly resource: string;
}

/** Reads how the deletion ended, once the wait for it is over. */
export async function deletionEnd(
  scenario: Scenario,
  reference: DeletionReference,
  deleteSeq: number,
  stuck: string | undefined,
): Promise<DeletionEnd> {
  const cleanup = new Set(reference.cleanup);
  const leftovers = (await liveChildObjects(scenario))
    .filter((c) =>
      cleanup.has(writeKey(reference.roles, { group: c.group, resource: c.resource, name: c.ref.name })),
    )
    .map((c) => `${c.ref.kind}/${c.ref.name}`);
  return {
    deleteSeq,
    ...(stuck ? { stuck } : {}),
    writes: scenario.operatorWrites({ after: deleteSeq }),
    leftovers,
    operatorLog: await scenario.operatorLog(10),
    versionsBeforeDelete: scenario.customResourceVersionsBefore(deleteSeq),
    customResourceName: scenario.customResource.name,
  };
}

/**
 * What the operator's creates after the kit's delete are, told apart by what
 * the same process's writes of the custom resource show of its view of it.
 * Informers are separate: a child's deletion by the garbage collector can
 * wake a reconcile that still reads the custom resource as it was before the
 * delete, and that reconcile recreates the child in good faith (the garbage
 * collector removes it again). A correct operator does that; one that
 * creates from a view that shows the deletion does not.
 */
export interface CreatesAfterTheDelete {
  /**
   * Made from a view with the deletion: an earlier write of the custom
   * resource by the same process, since the delete, sent a resourceVersion
   * from after it, and a later reconcile of it reads no older view. Judged;
   * each with why.
   */
  readonly judged: readonly { readonly write: WriteEntry; readonly why: string }[];
  /**
   * Made from a view without the deletion: the same process's next write
   * of the custom resource (its status, most often) sent a resourceVersion
   * the custom resource had before the delete (the 409 it meets is the
   * proof). Shown, not judged; each with why.
   */
  readonly excused: ReadonlyMap<number, string>;
  /** Neither shown: the kit cannot tell which view the reconcile read. Each with why. */
  readonly undecided: ReadonlyMap<number, string>;
}

/** The operator's creates after the delete (not of a subresource), sorted by what its writes show of its view. Pure. */
export function createsAfterTheDelete(
  end: DeletionEnd,
  customResource: CustomResourceKind,
): CreatesAfterTheDelete {
  const judged: { write: WriteEntry; why: string }[] = [];
  const excused = new Map<number, string>();
  const undecided = new Map<number, string>();
  // Absent in observations recorded before they were kept: no view can be told.
  const before = end.versionsBeforeDelete === undefined ? undefined : new Set(end.versionsBeforeDelete);
  const ofCustomResource = (w: WriteEntry) =>
    w.group === customResource.group &&
    w.resource === customResource.resource &&
    (end.customResourceName === undefined || w.name === end.customResourceName);
  for (const create of end.writes) {
    if (create.effect !== "created" || create.subresource) continue;
    const what = `write ${create.seq} (create ${create.resource}/${create.name ?? create.generateName ?? "?"})`;
    if (before === undefined) {
      undecided.set(create.seq, `${what}: this observation keeps no resourceVersions from before the delete`);
      continue;
    }
    const ofRun = end.writes.filter((w) => w.run === create.run && ofCustomResource(w));
    const seen = ofRun
      .filter((w) => w.seq < create.seq)
      .map((w) => ({ write: w, showed: showsTheDeletion(w, before) }))
      .find((w) => w.showed !== undefined);
    if (seen) {
      judged.push({
        write: create,
        why: `${what} came after the same process's write ${seen.write.seq} of the custom resource, which ${seen.showed ?? ""}: its view had the deletion`,
      });
      continue;
    }
    const sameRun = ofRun.filter((w) => w.sentResourceVersion !== undefined);
    const next = sameRun.find((w) => w.seq > create.seq);
    if (next?.sentResourceVersion !== undefined && before.has(next.sentResourceVersion)) {
      excused.set(
        create.seq,
        `${what} was made from a view without the deletion: the same process's next write of the custom resource (write ${next.seq}, ${next.code}${next.reason ? ` ${next.reason}` : ""}) sent resourceVersion ${next.sentResourceVersion}, which it had before the delete`,
      );
      continue;
    }
    const after = next
      ? `its next (write ${next.seq}) sent resourceVersion ${next.sentResourceVersion ?? "?"}, from after the delete, which may be a later reconcile's`
      : "and it made none after";
    undecided.set(
      create.seq,
      `${what}: nothing shows whether the reconcile that made it had seen the deletion: the same process had sent no write of the custom resource since the delete, ${after}`,
    );
  }
  return { judged, excused, undecided };
}

/**
 * What an operator's write of the custom resource after the delete shows of
 * a view that had the deletion, or undefined: it sent a resourceVersion from
 * after the delete, or it took off a finalizer (an operator does that for a
 * terminating object only), which an update with no resourceVersion, a
 * merge patch or a server-side apply shows too.
 */
function showsTheDeletion(write: WriteEntry, before: ReadonlySet<string>): string | undefined {
  const sent = write.sentResourceVersion;
  if (sent !== undefined && !before.has(sent)) {
    return `sent resourceVersion ${sent}, from after the delete`;
  }
  if (write.code < 200 || write.code >= 300 || write.verb === "delete" || write.subresource) return undefined;
  if (write.effect === "deleted") return "took off the last finalizer, which ended the object";
  if (write.changedPaths?.some((path) => path.startsWith("metadata.finalizers"))) {
    return "changed its finalizers";
  }
  return undefined;
}

/**
 * What went wrong in a deletion, in the order a reader needs it: the custom
 * resource never went, the cleanup left something behind, the operator
 * created something after the delete, or deleted one name twice across two
 * objects (a delete of something it had recreated). Pure.
 */
export function deletionProblems(end: DeletionEnd, customResource: CustomResourceKind): string[] {
  const problems: string[] = [];
  if (end.stuck) problems.push(`the custom resource was not deleted: ${end.stuck}`);
  if (end.leftovers.length > 0) {
    problems.push(`the cleanup left ${end.leftovers.join(", ")} behind (the reference's cleanup deletes it)`);
  }
  const creates = createsAfterTheDelete(end, customResource).judged.map((c) => c.write);
  if (creates.length > 0) {
    problems.push(
      `it created ${creates.map((w) => `${w.resource}/${w.name ?? w.generateName ?? "?"} (write ${w.seq})`).join(", ")} after the deletion began`,
    );
  }
  const deleted = new Map<string, Set<string>>();
  for (const w of end.writes) {
    if (w.verb !== "delete" || w.code < 200 || w.code >= 300 || !w.uid) continue;
    const key = `${w.resource}/${w.name ?? ""}`;
    deleted.set(key, (deleted.get(key) ?? new Set()).add(w.uid));
  }
  for (const [key, uids] of deleted) {
    if (uids.size > 1)
      problems.push(
        `it deleted ${key} ${uids.size} times, each a different object (uids ${[...uids].join(", ")})`,
      );
  }
  return problems;
}

/** The evidence of a deletion: the operator's writes after the delete, and what was left. */
export function deletionEvidence(
  end: DeletionEnd,
  customResource: CustomResourceKind,
  notes: readonly string[] = [],
): Evidence {
  const creates = createsAfterTheDelete(end, customResource);
  return {
    writes: end.writes.map(writeEvidence),
    notes: [
      `the kit deleted the custom resource at write ${end.deleteSeq}`,
      ...(end.leftovers.length > 0 ? [`still there: ${end.leftovers.join(", ")}`] : []),
      ...creates.judged.map(({ why }) => `judged: ${why}`),
      ...[...creates.excused.values()].map((why) => `not judged: ${why}`),
      ...[...creates.undecided.values()].map((why) => `cannot tell: ${why}`),
      ...notes,
    ],
  };
}

/**
 * The verdict of a deletion in which nothing went wrong that the evidence
 * shows, but the operator created something after the delete from a view
 * the kit cannot tell: inconclusive, never a pass or a failure on a guess.
 * Undefined when there is no such create.
 */
export function undecidedCreates(
  end: DeletionEnd,
  customResource: CustomResourceKind,
  evidence: Evidence,
): Judgement | undefined {
  const { undecided } = createsAfterTheDelete(end, customResource);
  if (undecided.size === 0) return undefined;
  const writes = [...undecided.keys()].map((seq) => `write ${seq}`).join(", ");
  return {
    status: "inconclusive",
    message: `the operator created something after the delete (${writes}) and nothing shows whether it had seen the deletion then: a reconcile that read the custom resource before its informer had the deletion does that in good faith, one that had seen it must not (the notes say what was seen)`,
    evidence: { ...evidence, operatorLog: end.operatorLog },
    attemptAgain:
      "a reconcile that reads the custom resource before its informer has the deletion is a race between two informers, which a new deletion may not meet",
  };
}
