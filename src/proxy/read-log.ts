import { NdjsonFile } from "../util/ndjson-file.js";
import { matchesObject, type ObjectMatch } from "./object-matcher.js";
import type { RequestInfo, ResourceIdentity } from "./request-classifier.js";
import type { Actor } from "./write-log.js";

/** One get, list or watch through the proxy: what the operator asked to see. */
export interface ReadEntry extends ResourceIdentity {
  /** 1, 2, 3, ... in the order reads arrived. */
  readonly seq: number;
  readonly time: string;
  readonly actor: Actor;
  readonly run?: number;
  readonly verb: "get" | "list" | "watch";
  /** The `resourceVersion` query parameter: where a list or watch starts. */
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** HTTP status of the answer; for a watch, of the stream's start. */
  readonly code: number;
}

export interface ReadQuery extends ObjectMatch {
  readonly actor?: Actor;
  /** Only reads with seq greater than this. */
  readonly after?: number;
  /** Only answered (2xx) reads. */
  readonly succeeded?: boolean;
}

/**
 * One watch event the proxy passed to the operator: which object, at which
 * resourceVersion, and where that falls among the writes (every write with
 * a sequence number of `beforeWriteSeq` or more was sent after it).
 */
export interface DeliveredEvent {
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  readonly group: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly name: string;
  readonly resourceVersion: string;
  readonly run?: number;
  readonly beforeWriteSeq: number;
  /** When the proxy delivered it (the run's clock). */
  readonly at?: number;
}

/**
 * The ordered record of reads, so evidence can show what the operator saw.
 * In memory; optionally mirrored to NDJSON files per scenario (reads, and
 * the watch events delivered), for a person reading the artifacts.
 */
export class ReadLog {
  private readonly entries: ReadEntry[] = [];
  private readonly deliveries: DeliveredEvent[] = [];
  private lastDelivery: number | undefined;
  private readonly files: { readonly reads: NdjsonFile; readonly events: NdjsonFile } | undefined;

  constructor(files?: { readonly reads: string; readonly events: string }) {
    this.files = files && {
      reads: new NdjsonFile(files.reads, "the read log"),
      events: new NdjsonFile(files.events, "the watch events log"),
    };
  }

  /** The operator's watch events, as delivered (bookmarks and errors left out). */
  get delivered(): readonly DeliveredEvent[] {
    return this.deliveries;
  }

  /** When the last watch event was delivered (a reading of the run's clock); undefined before the first. */
  get lastDeliveryAt(): number | undefined {
    return this.lastDelivery;
  }

  /** Notes a watch event passed to the operator, at `at` (the run's clock). */
  deliver(event: DeliveredEvent, at?: number): void {
    const delivered = at === undefined ? event : { ...event, at };
    this.deliveries.push(delivered);
    if (at !== undefined) this.lastDelivery = at;
    this.files?.events.append(delivered);
  }

  /** Waits until the files hold everything recorded so far. */
  async flush(): Promise<void> {
    await this.files?.reads.flush();
    await this.files?.events.flush();
  }

  get lastSeq(): number {
    return this.entries.length;
  }

  /** Records a read once its answer's status is known. */
  record(entry: Omit<ReadEntry, "seq">): ReadEntry {
    const full = { seq: this.entries.length + 1, ...entry };
    this.entries.push(full);
    this.files?.reads.append(full);
    return full;
  }

  query(query: ReadQuery = {}): ReadEntry[] {
    return this.entries.filter(
      (e) =>
        matchesObject(query, e) &&
        (query.actor === undefined || e.actor === query.actor) &&
        (query.after === undefined || e.seq > query.after) &&
        (!query.succeeded || (e.code >= 200 && e.code < 300)),
    );
  }
}

/** The read parameters worth keeping from a request's query string. */
export function readParameters(
  info: RequestInfo,
  url: string,
): Pick<ReadEntry, "resourceVersion" | "resourceVersionMatch" | "labelSelector" | "fieldSelector"> {
  const params = new URL(url, "http://read.invalid").searchParams;
  const pick = (key: string) => params.get(key) ?? undefined;
  const values = {
    resourceVersion: pick("resourceVersion"),
    resourceVersionMatch: pick("resourceVersionMatch"),
    labelSelector: pick("labelSelector"),
    fieldSelector: info.verb === "get" ? undefined : pick("fieldSelector"),
  };
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined && v !== ""));
}
