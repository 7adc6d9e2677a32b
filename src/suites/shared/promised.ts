import type { Contract } from "../../contract/load-contract.js";
import {
  describeVolatile,
  promisesFor,
  volatileOnly,
  type Identity,
  type ObjectPromises,
} from "../../contract/promises.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import type { ChildRecord } from "../../scenario/reference-state.js";

/**
 * How the checks read the contract's promises (docs/contract.md,
 * "Promises"): for a write or an object, whether the promise a check
 * asserts holds for it, and when it does not, the sentence that says so in
 * the verdict's evidence. Pure.
 */

/** The kinds of what the operator writes: its custom resource's and its children's, by group/resource. */
export class ObjectKinds {
  private readonly kinds = new Map<string, string>();

  constructor(
    private readonly contract: Pick<Contract, "promises" | "customResource">,
    children: readonly Pick<ChildRecord, "group" | "resource" | "ref">[] = [],
  ) {
    const { group, resource, kind } = contract.customResource;
    this.kinds.set(`${group}/${resource}`, kind);
    for (const child of children) this.kinds.set(`${child.group}/${child.resource}`, child.ref.kind);
  }

  kindOf(entry: Pick<WriteEntry, "group" | "resource">): string | undefined {
    return this.kinds.get(`${entry.group}/${entry.resource}`);
  }

  /** What the object a write is about promises; everything when its kind is unknown. */
  promisesOf(
    entry: Pick<WriteEntry, "group" | "resource" | "name">,
  ): ObjectPromises & { readonly kind?: string } {
    const kind = this.kindOf(entry);
    if (kind === undefined) return { withdrawn: new Map(), volatile: [] };
    return { kind, ...promisesFor(this.contract.promises, kind, entry.name ?? "") };
  }

  /**
   * Why `identity` is not promised for the object, as a note
   * ("Service/web does not promise uid: promises[1]: ..."); undefined when it is.
   */
  withdrawn(entry: Pick<WriteEntry, "group" | "resource" | "name">, identity: Identity): string | undefined {
    const promises = this.promisesOf(entry);
    const why = promises.withdrawn.get(identity);
    return why === undefined
      ? undefined
      : `${promises.kind ?? entry.resource}/${entry.name ?? "?"} does not promise ${identity} (${why})`;
  }
}

/** "#12 update webapps/hello/status": a write as the promises' notes name it. */
export function writeLabel(entry: WriteEntry): string {
  return `#${entry.seq} ${entry.verb} ${entry.resource}/${entry.name ?? "?"}${entry.subresource ? `/${entry.subresource}` : ""}`;
}

/** Whether a changed write changed only fields its object declares volatile. */
export function changedOnlyVolatile(entry: WriteEntry, kinds: ObjectKinds): boolean {
  if (entry.effect !== "changed") return false;
  const volatile = volatileOnly(kinds.promisesOf(entry), entry.changedPaths);
  return volatile !== "unknown" && volatile.only;
}

/** The effective writes of a window, sorted by what the promises make of them. */
export interface PromisedWrites {
  /** Writes that break a promise: they count. */
  readonly counted: readonly WriteEntry[];
  /** Writes the contract allows, each with the note that says why. */
  readonly excused: readonly { readonly entry: WriteEntry; readonly why: string }[];
  /** Changed writes to objects with volatile fields whose changed fields the write log could not read. */
  readonly unknown: readonly WriteEntry[];
}

/**
 * Sorts effective writes (created, changed, deleted) by the promises: a
 * create or delete breaks `uid`; a change breaks `resourceVersion` unless
 * every field it changed is volatile for its object.
 */
export function sortByPromises(writes: readonly WriteEntry[], kinds: ObjectKinds): PromisedWrites {
  const counted: WriteEntry[] = [];
  const excused: { entry: WriteEntry; why: string }[] = [];
  const unknown: WriteEntry[] = [];
  for (const entry of writes) {
    const label = writeLabel(entry);
    if (entry.effect === "created" || entry.effect === "deleted") {
      const why = kinds.withdrawn(entry, "uid");
      if (why) excused.push({ entry, why: `${label}: ${why}` });
      else counted.push(entry);
      continue;
    }
    const why = kinds.withdrawn(entry, "resourceVersion");
    if (why) {
      excused.push({ entry, why: `${label}: ${why}` });
      continue;
    }
    const volatile = volatileOnly(kinds.promisesOf(entry), entry.changedPaths);
    if (volatile === "unknown") unknown.push(entry);
    else if (volatile.only) {
      excused.push({
        entry,
        why: `${label} changed only volatile fields: ${describeVolatile(volatile.fields)}`,
      });
    } else counted.push(entry);
  }
  return { counted, excused, unknown };
}
