import { NdjsonFile } from "../util/ndjson-file.js";
import type { PatchType } from "../kube/patch-types.js";
import { pollUntil } from "../util/poll.js";
import { matchesObject, type ObjectMatch } from "./object-matcher.js";
import type { RequestInfo, ResourceIdentity } from "./request-classifier.js";
import type { WriteEffect } from "./write-effect.js";

/**
 * Writes that oracles leave out by default: bookkeeping (Events, Leases)
 * and requests that store nothing (reviews, token requests).
 */
export type WriteTag = "event" | "lease" | "review";

/** Who made a write: the operator under test, or the kit (its perturbations and faults). */
export type Actor = "operator" | "kit";

/**
 * One mutating request through the proxy: the request's identity and what
 * came of it. Entries are numbered in the order writes reach the API server.
 */
export interface WriteEntry extends ResourceIdentity {
  /** 1, 2, 3, ... shared by operator and kit writes. */
  readonly seq: number;
  /** ISO time the request arrived. */
  readonly time: string;
  readonly actor: Actor;
  /** The operator's run that sent it: 1 for the first start, +1 for each restart. */
  readonly run?: number;
  readonly verb: RequestInfo["verb"];
  /** The object's name; for a create, from the body or (generateName) the server's answer. */
  readonly name?: string;
  /** metadata.generateName of a create that used it. */
  readonly generateName?: string;
  readonly patchType?: PatchType | "unknown";
  /** The `fieldManager` query parameter. */
  readonly fieldManager?: string;
  /** Present when the request asked for a dry run. */
  readonly dryRun?: true;
  /** The resourceVersion the request itself carried as a precondition. */
  readonly sentResourceVersion?: string;
  /**
   * Set when the request had no precondition and the proxy conditioned it on
   * the state it had just read (retrying itself on a conflict): the
   * resourceVersion used, and how many times it had to send it.
   */
  readonly proxyPrecondition?: { readonly resourceVersion: string; readonly attempts: number };
  /** The object's resourceVersion when the proxy read it just before the write. */
  readonly priorResourceVersion?: string;
  /** HTTP status of the answer (0: never answered: dropped, or hung by a fault). */
  readonly code: number;
  /** Status reason on failure (Conflict, AlreadyExists, NotFound, ...). */
  readonly reason?: string;
  /** What the write did to what is stored; see write-effect.ts. */
  readonly effect: WriteEffect;
  /** Why the effect was judged so, when it is not plain. */
  readonly effectWhy?: string;
  /**
   * For a `changed` write: the fields it changed ("status.lastHeartbeatTime",
   * "spec.ports[name=http].port"), from the stored object just before and
   * just after it, leaving out what the server maintains (resourceVersion,
   * managedFields, generation). Absent when those states could not be read.
   */
  readonly changedPaths?: readonly string[];
  /** The object's UID (from the answer, or from the state read before a delete). */
  readonly uid?: string;
  /** UIDs in the object's ownerReferences. */
  readonly ownerUids?: readonly string[];
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly tag?: WriteTag;
  /** The fault that acted on this write, or that this kit write belongs to. */
  readonly fault?: string;
  /** The request body when it was JSON or YAML, with Secret values replaced by hashes. */
  readonly body?: unknown;
  /**
   * Set on an operator write its clock made, not anything the kit did or
   * showed it (a schedule's tick, a heartbeat, a resync): by the scenario,
   * which reads the watch deliveries and the queues too
   * (src/scenario/clock-writes.ts), never by the proxy.
   */
  readonly clock?: ClockMark;
}

/** Why a write is taken for the clock's: see src/scenario/clock-writes.ts. */
export interface ClockMark {
  /** The last write before it (the operator's or the kit's): its seq. */
  readonly quietSinceSeq: number;
  /** When the last stimulus before it came (ISO): the operator fell quiet after it. */
  readonly quietSince: string;
  /** What that stimulus was: "the operator's write 9", "the kit's write 15", a watch event. */
  readonly since?: string;
  /** How long after that write this one came. */
  readonly afterMs: number;
  /** The evidence that told it: the operator's work queues, or silence alone (weaker). */
  readonly by: "queues" | "silence";
  /** What it had pending, as far as that evidence shows. */
  readonly pending: string;
  /** How long after the kit's create of the custom resource in this life it came (absent before one). */
  readonly afterSampleMs?: number;
  /**
   * Set on a create in a restarted process's first burst, of a kind the
   * killed process's clock had made, while it had a delayed requeue pending:
   * a tick that came due while it was down (`quietSinceSeq` is then the
   * killed process's last write).
   */
  readonly catchUp?: true;
  /**
   * Set on the writes that go on with a burst the clock began (one tick's
   * work: the Job, then the status that records it): the seq of the write
   * that began it, whose mark this is.
   */
  readonly firing?: number;
}

export interface WriteQuery extends ObjectMatch {
  readonly actor?: Actor;
  readonly effect?: WriteEffect;
  /** Only entries with seq greater than this. */
  readonly after?: number;
  /** Leave out Events, Leases and reviews (the default for oracles). */
  readonly withoutTags?: boolean;
  /** Only successful (2xx) writes. */
  readonly succeeded?: boolean;
}

/**
 * The ordered record of writes through the proxy. In memory with a small
 * query API; optionally mirrored line by line to an NDJSON file per scenario.
 */
export class WriteLog {
  private readonly entries: WriteEntry[] = [];
  private readonly file: NdjsonFile | undefined;
  private nextSeq = 1;

  constructor(file?: string) {
    this.file = file === undefined ? undefined : new NdjsonFile(file, "the write log");
  }

  /** The next sequence number; taken by a write just before it is sent to the API server. */
  takeSeq(): number {
    return this.nextSeq++;
  }

  /** The sequence number the next write will take: what happens now comes before that write. */
  get nextSeqToTake(): number {
    return this.nextSeq;
  }

  append(entry: WriteEntry): void {
    // Writes finish out of order; keep the log in the order they were sent.
    let index = this.entries.length;
    while (index > 0 && (this.entries[index - 1]?.seq ?? 0) > entry.seq) index--;
    this.entries.splice(index, 0, entry);
    this.file?.append(entry);
  }

  /** Entries matching every given field, in order. */
  query(query: WriteQuery = {}): WriteEntry[] {
    return this.entries.filter((e) => matchesWrite(query, e));
  }

  /** The highest sequence number recorded so far (0 when empty). */
  get lastSeq(): number {
    return this.entries.at(-1)?.seq ?? 0;
  }

  /** Resolves with the first entry (after `query.after`) matching the query; rejects at the deadline. */
  async waitFor(
    query: WriteQuery,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<WriteEntry> {
    return pollUntil(
      () => {
        const [found] = this.query(query);
        return found
          ? { done: true, value: found }
          : { done: false, reason: `no write matching ${JSON.stringify(query)}` };
      },
      { description: "a write", timeoutMs: options.timeoutMs, intervalMs: 20, signal: options.signal },
    );
  }

  /** Waits until every line appended so far is in the NDJSON file; rejects if any could not be written. */
  async flush(): Promise<void> {
    await this.file?.flush();
  }
}

export function matchesWrite(query: WriteQuery, entry: WriteEntry): boolean {
  return (
    matchesObject(query, entry) &&
    (query.after === undefined || entry.seq > query.after) &&
    (!query.withoutTags || entry.tag === undefined) &&
    (query.actor === undefined || entry.actor === query.actor) &&
    (query.effect === undefined || entry.effect === query.effect) &&
    (!query.succeeded || (entry.code >= 200 && entry.code < 300))
  );
}

/**
 * The annotation client-go's ConfigMap and Endpoints locks keep the leader
 * record in: an object that carries it is the operator's manager electing
 * itself, not the sample's child.
 */
export const LEADER_RECORD_ANNOTATION = "control-plane.alpha.kubernetes.io/leader";

/**
 * Events and Leases are bookkeeping, reviews store nothing: tagged so
 * oracles can leave them out. A ConfigMap or Endpoints whose body carries a
 * leader record is a lease of the older kind (`body`: the request's, parsed).
 */
export function tagOf(
  info: Pick<RequestInfo, "group" | "resource" | "subresource">,
  body?: unknown,
): WriteTag | undefined {
  if (info.resource === "events" && (info.group === "" || info.group === "events.k8s.io")) return "event";
  if (info.resource === "leases" && info.group === "coordination.k8s.io") return "lease";
  if (info.group === "" && (info.resource === "configmaps" || info.resource === "endpoints")) {
    const annotations = (body as { metadata?: { annotations?: unknown } } | undefined)?.metadata?.annotations;
    if (typeof annotations === "object" && annotations !== null && LEADER_RECORD_ANNOTATION in annotations) {
      return "lease";
    }
  }
  if (
    info.group === "authentication.k8s.io" ||
    info.group === "authorization.k8s.io" ||
    info.subresource === "token"
  ) {
    return "review";
  }
  return undefined;
}
