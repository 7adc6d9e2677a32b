import { appendFile } from "node:fs/promises";
import { describeError, InfrastructureError } from "../errors.js";
import { pollUntil } from "../util/poll.js";
import type { RequestInfo } from "./request-classifier.js";

/** Writes that oracles ignore by default: bookkeeping, not reconcile effects. */
export type WriteTag = "event" | "lease";

/**
 * One mutating request, as the proxy saw it: the request's identity (verb,
 * group, version, resource, subresource, namespace, name, patch type; for a
 * create, the name from the body or the server's answer) and what came of it.
 */
export interface WriteEntry extends Omit<RequestInfo, "path"> {
  /** 1, 2, 3, ... in the order requests arrived. */
  readonly seq: number;
  /** ISO time the request arrived. */
  readonly time: string;
  /** metadata.resourceVersion the request carried: a precondition (JSON bodies only). */
  readonly sentResourceVersion?: string;
  /** The object's resourceVersion just before the write, when the proxy had to look it up. */
  readonly priorResourceVersion?: string;
  /** HTTP status of the answer the operator got (or would have got: see `fault`). */
  readonly code: number;
  /** Status reason on failure (Conflict, AlreadyExists, NotFound, ...). */
  readonly reason?: string;
  /** From the object in a successful answer. */
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  /**
   * False when the write changed nothing stored (the resourceVersion did not
   * move); undefined when that cannot be told (deletes, failures).
   */
  readonly effective?: boolean;
  readonly tag?: WriteTag;
  /** The fault that acted on this request, if any. */
  readonly fault?: string;
  /** The request body when it was JSON, for oracles that compare fields. */
  readonly body?: unknown;
  /** Who wrote: the operator, or the kit itself (a concurrent write it injected). */
  readonly actor: "operator" | "kit";
}

export type WriteQuery = Partial<
  Pick<WriteEntry, "verb" | "group" | "resource" | "subresource" | "namespace" | "name" | "actor">
> & {
  /** Only entries with seq greater than this. */
  readonly after?: number;
  /** Leave out Events and Leases (the default for oracles). */
  readonly withoutTags?: boolean;
};

/**
 * The ordered record of writes through the proxy. In memory with a small
 * query API; optionally mirrored line by line to an NDJSON file per scenario.
 */
export class WriteLog {
  private readonly entries: WriteEntry[] = [];
  private pendingFile: Promise<void> = Promise.resolve();
  private fileError: unknown;

  private nextSeq = 1;

  constructor(private readonly file?: string) {}

  /** The next sequence number; the proxy takes one per request as it arrives. */
  takeSeq(): number {
    return this.nextSeq++;
  }

  append(entry: WriteEntry): void {
    this.entries.push(entry);
    this.entries.sort((a, b) => a.seq - b.seq);
    if (this.file) {
      const line = `${JSON.stringify(entry)}\n`;
      const file = this.file;
      // A failing file must not take the run down mid-scenario: keep the first
      // error and report it from flush(), where the scenario ends.
      this.pendingFile = this.pendingFile
        .then(() => appendFile(file, line))
        .catch((error: unknown) => {
          this.fileError ??= error;
        });
    }
  }

  /** Entries matching every given field, in order. */
  query(query: WriteQuery = {}): WriteEntry[] {
    return this.entries.filter(
      (e) =>
        (query.after === undefined || e.seq > query.after) &&
        (!query.withoutTags || e.tag === undefined) &&
        (query.verb === undefined || e.verb === query.verb) &&
        (query.group === undefined || e.group === query.group) &&
        (query.resource === undefined || e.resource === query.resource) &&
        (query.subresource === undefined || e.subresource === query.subresource) &&
        (query.namespace === undefined || e.namespace === query.namespace) &&
        (query.name === undefined || e.name === query.name) &&
        (query.actor === undefined || e.actor === query.actor),
    );
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
    await this.pendingFile;
    if (this.fileError !== undefined) {
      throw new InfrastructureError(
        "proxy/write-log-file",
        `cannot write the write log to ${this.file}: ${describeError(this.fileError)}`,
      );
    }
  }
}

/** Events and Leases are bookkeeping: tagged so oracles can leave them out. */
export function tagOf(info: RequestInfo): WriteTag | undefined {
  if (info.resource === "events" && (info.group === "" || info.group === "events.k8s.io")) return "event";
  if (info.resource === "leases" && info.group === "coordination.k8s.io") return "lease";
  return undefined;
}
