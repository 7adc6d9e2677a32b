import type { KubeObject, ObjectRef } from "../kube/kube-client.js";
import type { ClockMark, WriteEntry } from "../proxy/write-log.js";
import { describeClockWrite } from "./clock-marks.js";
import { canonicalOrder } from "../util/keyed-lists.js";
import type { Scenario } from "./scenario.js";

/** A child of the custom resource, as the reference recorded it. */
export interface ChildRecord {
  readonly ref: ObjectRef;
  /** group/resource as the write log names it. */
  readonly group: string;
  readonly resource: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly generation?: number;
  /**
   * Set when the operator's create of it was a write its clock made
   * (clock-writes.ts): a schedule's tick, not an answer to anything the kit
   * did. Comparisons with another life leave such a child out when the other
   * life has none of its role (end-state.ts).
   */
  readonly madeByClock?: Pick<WriteEntry, "seq" | "time"> & { readonly clock: ClockMark };
}

/**
 * What a converged scenario looks like, to compare later states with: the
 * custom resource (identity, generation, status), the children the operator
 * created (their UIDs and generations), and the operator's writes so far.
 */
export interface ReferenceState {
  readonly customResource: {
    readonly uid: string;
    readonly resourceVersion: string;
    readonly generation?: number;
    readonly status: unknown;
  };
  readonly children: readonly ChildRecord[];
  readonly writes: readonly WriteEntry[];
  /** The write log's last sequence number when the reference was taken: later entries are "after". */
  readonly markSeq: number;
}

export async function recordReference(
  scenario: Scenario,
  customResource: KubeObject,
): Promise<ReferenceState> {
  return {
    customResource: {
      uid: customResource.metadata?.uid ?? "",
      resourceVersion: customResource.metadata?.resourceVersion ?? "",
      ...(customResource.metadata?.generation === undefined
        ? {}
        : { generation: customResource.metadata.generation }),
      status: customResource.status,
    },
    children: await liveChildren(scenario),
    writes: scenario.operatorWrites(),
    markSeq: scenario.proxy.writeLog.lastSeq,
  };
}

/** A child as it is now: its record and the whole live object. */
export interface LiveChild extends ChildRecord {
  readonly object: KubeObject;
}

/** The objects the operator created in this scenario that still exist, as they are now. */
export async function liveChildren(scenario: Scenario): Promise<ChildRecord[]> {
  return (await liveChildObjects(scenario)).map(({ object: _object, ...record }) => record);
}

/**
 * The objects the operator created in this scenario that still exist, with
 * the live objects: the end state a check compares with a reference. Each
 * object's keyed lists are in their key's order (keyed-lists.ts): the order
 * an operator wrote a Service's ports in means nothing, and every position
 * a check names (a drift target's `spec.ports[1].port`, a value generated
 * per life) then counts the same in every life.
 */
export async function liveChildObjects(scenario: Scenario): Promise<LiveChild[]> {
  const seen = new Map<string, WriteEntry>();
  for (const entry of scenario.operatorWrites({ effect: "created" })) {
    if (!entry.name || entry.subresource) continue;
    seen.set(`${entry.group}/${entry.resource}/${entry.namespace ?? ""}/${entry.name}`, entry);
  }
  const children: LiveChild[] = [];
  for (const entry of seen.values()) {
    const apiVersion = entry.group ? `${entry.group}/${entry.version}` : entry.version;
    const kind = await scenario.kit.kindOf(apiVersion, entry.resource);
    const ref: ObjectRef = {
      apiVersion,
      kind,
      name: entry.name ?? "",
      ...(entry.namespace ? { namespace: entry.namespace } : {}),
    };
    const live = await scenario.kit.tryGet(ref);
    if (!live?.metadata?.uid) continue;
    children.push({
      ref,
      group: entry.group,
      resource: entry.resource,
      uid: live.metadata.uid,
      resourceVersion: live.metadata.resourceVersion ?? "",
      ...(live.metadata.generation === undefined ? {} : { generation: live.metadata.generation }),
      ...(entry.clock && entry.uid === live.metadata.uid
        ? { madeByClock: { seq: entry.seq, time: entry.time, clock: entry.clock } }
        : {}),
      object: canonicalOrder(live) as KubeObject,
    });
  }
  return children;
}

/** "Service/web" for messages. */
export function describeRef(ref: ObjectRef): string {
  return `${ref.kind}/${ref.name}`;
}

/** A write log entry as evidence: what a person needs to read it. */
export function writeEvidence(entry: WriteEntry): Record<string, unknown> {
  return {
    seq: entry.seq,
    actor: entry.actor,
    ...(entry.run === undefined ? {} : { run: entry.run }),
    write: `${entry.verb} ${entry.group ? `${entry.resource}.${entry.group}` : entry.resource}/${entry.name ?? ""}${entry.subresource ? `/${entry.subresource}` : ""}`,
    ...(entry.sentResourceVersion ? { sentResourceVersion: entry.sentResourceVersion } : {}),
    code: entry.code,
    ...(entry.reason ? { reason: entry.reason } : {}),
    effect: entry.effect,
    ...(entry.effectWhy ? { why: entry.effectWhy } : {}),
    ...(entry.changedPaths ? { changed: entry.changedPaths } : {}),
    ...(entry.fieldManager ? { fieldManager: entry.fieldManager } : {}),
    ...(entry.resourceVersion ? { resourceVersion: entry.resourceVersion } : {}),
    ...(entry.fault ? { fault: entry.fault } : {}),
    ...(entry.clock ? { clock: describeClockWrite(entry) } : {}),
  };
}
