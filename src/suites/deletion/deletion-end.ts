import type { WriteEntry } from "../../proxy/write-log.js";
import { writeKey, type ChildRoles } from "../../scenario/child-roles.js";
import type { DeletionRecord } from "../../scenario/deletion.js";
import { liveChildObjects, writeEvidence } from "../../scenario/reference-state.js";
import type { Scenario } from "../../scenario/scenario.js";
import type { SpecReference } from "../../scenario/spec-references.js";
import type { Evidence } from "../../report/report-model.js";
import type { Skip, TargetContext } from "../check.js";

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
  };
}

/**
 * What went wrong in a deletion, in the order a reader needs it: the custom
 * resource never went, the cleanup left something behind, the operator
 * created something after the delete, or deleted one name twice across two
 * objects (a delete of something it had recreated). Pure.
 */
export function deletionProblems(end: DeletionEnd): string[] {
  const problems: string[] = [];
  if (end.stuck) problems.push(`the custom resource was not deleted: ${end.stuck}`);
  if (end.leftovers.length > 0) {
    problems.push(`the cleanup left ${end.leftovers.join(", ")} behind (the reference's cleanup deletes it)`);
  }
  const creates = end.writes.filter((w) => w.effect === "created" && !w.subresource);
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
export function deletionEvidence(end: DeletionEnd, notes: readonly string[] = []): Evidence {
  return {
    writes: end.writes.map(writeEvidence),
    notes: [
      `the kit deleted the custom resource at write ${end.deleteSeq}`,
      ...(end.leftovers.length > 0 ? [`still there: ${end.leftovers.join(", ")}`] : []),
      ...notes,
    ],
  };
}
