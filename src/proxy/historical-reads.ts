import type { RequestInfo } from "./request-classifier.js";

/**
 * Historical reads: the operator's first list of each resource, from a
 * given run on (the one after a restart), is served from an older
 * resourceVersion, so the restarted operator's caches start from a real past
 * state of the cluster and then catch up through the API server's own watch
 * events from that point. Pure bookkeeping: the proxy asks `route` what to
 * do with each request and reports what came of it.
 *
 * How (docs/design/staleness.md, "Consequences for historical reads"):
 * - client-go (v0.35) opens an informer with a watch-list stream
 *   (`watch=true&sendInitialEvents=true`), which the API server can only
 *   serve from the present. It is refused with 422 Invalid, the answer of a
 *   server without WatchList, on which the reflector falls back to a plain
 *   list at once. Refused for every later attempt too: each new
 *   list-and-watch tries watch-list again.
 * - That list is rewritten to `resourceVersion=X&resourceVersionMatch=Exact`
 *   without `limit` or `continue` (a paginated answer would make later
 *   relists paginated): the API server answers the state at X, which etcd
 *   keeps until compaction (5 minutes), or 410 Expired.
 * - The reflector then watches from X. The API server serves that watch from
 *   its watch cache, which keeps only a short window of events; beyond it
 *   the stream opens with 200 and then carries one ERROR event (410), after
 *   which the reflector silently relists to the present. The proof records
 *   such an error: the past did not take.
 * Only the first list of each resource is rewritten: a relist comes back
 * with the reflector's own last resourceVersion and must pass untouched.
 */
export interface HistoricalReadSpec {
  /** The state to serve: an etcd revision (a resourceVersion the cluster had). */
  readonly resourceVersion: string;
  /** Only the operator's requests of this run and later. */
  readonly fromRun: number;
}

/** One list served from the past. */
export interface HistoricalList {
  readonly group: string;
  readonly resource: string;
  readonly namespace?: string;
  /** The query the operator sent (what it would have been answered from). */
  readonly asked: string;
  /** The resourceVersion it was served from. */
  readonly servedFrom: string;
  /** The API server's answer: 200, or its refusal (410 once compacted). */
  readonly code?: number;
  /** The API server's message when it refused. */
  readonly refusal?: string;
}

/** A watch the operator opened from the past resourceVersion, and how it went. */
export interface HistoricalWatch {
  readonly group: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly code?: number;
  /** An ERROR event on it (410 "too old resource version": the watch cache no longer reached X). */
  readonly error?: string;
}

export interface HistoricalReadProof {
  readonly resourceVersion: string;
  /** Watch-list requests refused with 422 so that the operator's informers fell back to lists. */
  readonly refusedWatchLists: number;
  readonly lists: readonly HistoricalList[];
  readonly watches: readonly HistoricalWatch[];
}

/** What the proxy does with one request of the operator. */
export type HistoricalRoute =
  | { readonly kind: "pass" }
  | { readonly kind: "refuse-watch-list"; readonly message: string }
  | { readonly kind: "list-from-past"; readonly path: string; readonly list: MutableList }
  | { readonly kind: "watch-from-past"; readonly watch: MutableWatch };

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
export type MutableList = Mutable<HistoricalList>;
export type MutableWatch = Mutable<HistoricalWatch>;

export class HistoricalReads {
  private readonly served = new Map<string, MutableList>();
  private readonly watches: MutableWatch[] = [];
  private refused = 0;

  constructor(readonly spec: HistoricalReadSpec) {}

  /** What to do with the operator's read `info` (its URL `url`), made in run `run`. */
  route(info: RequestInfo, url: string, run: number): HistoricalRoute {
    if (run < this.spec.fromRun || info.name || info.subresource || !info.resource) return { kind: "pass" };
    const parsed = new URL(url, "http://request.invalid");
    const params = parsed.searchParams;
    const key = scopeKey(info);
    if (info.verb === "watch") {
      if (params.get("sendInitialEvents") === "true") {
        this.refused++;
        return {
          kind: "refuse-watch-list",
          message:
            "reconcile-conformance proxy: this scenario serves lists from the past; watch-list (sendInitialEvents) is not offered, list instead",
        };
      }
      if (this.served.has(key) && params.get("resourceVersion") === this.spec.resourceVersion) {
        const watch: MutableWatch = { ...identity(info) };
        this.watches.push(watch);
        return { kind: "watch-from-past", watch };
      }
      return { kind: "pass" };
    }
    if (info.verb !== "list" || this.served.has(key)) return { kind: "pass" };
    const asked = parsed.search.replace(/^\?/, "");
    params.delete("limit");
    params.delete("continue");
    params.set("resourceVersion", this.spec.resourceVersion);
    params.set("resourceVersionMatch", "Exact");
    const list: MutableList = { ...identity(info), asked, servedFrom: this.spec.resourceVersion };
    this.served.set(key, list);
    return { kind: "list-from-past", path: `${parsed.pathname}?${params.toString()}`, list };
  }

  proof(): HistoricalReadProof {
    return {
      resourceVersion: this.spec.resourceVersion,
      refusedWatchLists: this.refused,
      lists: [...this.served.values()].map((l) => ({ ...l })),
      watches: this.watches.map((w) => ({ ...w })),
    };
  }
}

/** What a proof says went wrong: a list the API server refused, or a watch that fell out of its window. */
export function historicalFailures(proof: HistoricalReadProof): string[] {
  return [
    ...proof.lists
      .filter((l) => l.code !== undefined && l.code !== 200)
      .map(
        (l) =>
          `the list of ${l.resource} at resourceVersion ${l.servedFrom} was refused (${l.code}): ${l.refusal ?? "no message"}`,
      ),
    ...proof.watches
      .filter((w) => w.error !== undefined || (w.code !== undefined && w.code !== 200))
      .map(
        (w) =>
          `the watch of ${w.resource} from resourceVersion ${proof.resourceVersion} ${w.error ? `ended in an ERROR event: ${w.error}` : `was answered ${w.code}`}`,
      ),
  ];
}

/** The message of a watch ERROR event (a metav1.Status), when it is JSON; otherwise what kind it is. */
export function watchErrorText(bytes: Buffer): string {
  try {
    const event = JSON.parse(bytes.toString("utf8")) as { object?: { code?: number; message?: string } };
    const { code, message } = event.object ?? {};
    if (message) return code ? `${code}: ${message}` : message;
  } catch {
    // A protobuf stream: its Status is not decoded here.
  }
  return "an ERROR event (not JSON: its Status is not shown)";
}

function identity(info: RequestInfo): { group: string; resource: string; namespace?: string } {
  return {
    group: info.group,
    resource: info.resource,
    ...(info.namespace ? { namespace: info.namespace } : {}),
  };
}

/** A list's scope: the resource, cluster-wide or in one namespace (a reflector lists one scope). */
function scopeKey(info: RequestInfo): string {
  return `${info.resource}.${info.group}/${info.namespace ?? ""}`;
}
