import type http from "node:http";
import type { ApiServerConnection, OutgoingHeaders } from "../kube/api-server-connection.js";
import type { Clock } from "../util/clock.js";
import { readStream } from "../util/streams.js";
import {
  HistoricalReads,
  watchErrorText,
  type HistoricalReadSpec,
  type HistoricalRoute,
} from "./historical-reads.js";
import { filterHeaders, respondStatus } from "./http-messages.js";
import { readParameters, type ReadLog } from "./read-log.js";
import type { RequestInfo } from "./request-classifier.js";
import { watchEventStream, type WatchEvent } from "./watch-events.js";
import type { WatchFaults } from "./watch-faults.js";
import type { Actor, WriteLog } from "./write-log.js";

/** One read as received: who sent it, what it addresses, the headers to forward. */
export interface IncomingRead {
  readonly actor: Actor;
  /** The operator's run at arrival (operator reads only). */
  readonly run?: number;
  readonly info: RequestInfo;
  readonly method: string;
  readonly url: string;
  readonly headers: OutgoingHeaders;
  readonly time: string;
}

/** The proxy's side of the read handler: what it shares with the writes. */
export interface ReadHandlerDeps {
  readonly connection: ApiServerConnection;
  readonly log: ReadLog;
  /** The write log, whose next sequence number dates each watch event delivered. */
  readonly writeLog: WriteLog;
  /** The operator's watch faults (hold, coalesce), which gate its watch streams. */
  readonly watchFaults: WatchFaults;
  /** Dates each watch event delivered (the quiescence rule reads when the last one was). */
  readonly clock: Clock;
}

/**
 * Every read through the proxy (get, list, watch, and whatever else is not
 * a write), streamed through untouched: its answer as it came, a watch
 * event by event at one seam the operator's watch faults act on. Each is
 * logged with its answer's code; each watch event delivered to the
 * operator is noted with the writes it could know of. A scenario's
 * historical reads serve the operator's first lists from the past.
 */
export class ReadHandler {
  /** The operator's open watch streams (all of the current token). */
  private readonly operatorWatches = new Set<http.ServerResponse>();
  /** Historical reads armed for the operator's next run, when a scenario asked for them. */
  private history: HistoricalReads | undefined;

  constructor(private readonly deps: ReadHandlerDeps) {}

  /** Arms historical reads (one at a time: a later one replaces the earlier). */
  armHistory(spec: HistoricalReadSpec): HistoricalReads {
    const history = new HistoricalReads(spec);
    this.history = history;
    return history;
  }

  /** Ends the operator's open watch streams (its token was revoked). */
  closeOperatorWatches(): void {
    for (const watch of this.operatorWatches) watch.destroy();
    this.operatorWatches.clear();
  }

  /** Streams a read and its answer through unchanged; a watch event by event. */
  async handle(read: IncomingRead, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { actor, run, info, time } = read;
    const record = (code: number, url: string) => {
      if (info.verb !== "get" && info.verb !== "list" && info.verb !== "watch") return;
      this.deps.log.record({
        time,
        actor,
        ...(run === undefined ? {} : { run }),
        verb: info.verb,
        group: info.group,
        version: info.version,
        resource: info.resource,
        ...(info.subresource ? { subresource: info.subresource } : {}),
        ...(info.namespace ? { namespace: info.namespace } : {}),
        ...(info.name ? { name: info.name } : {}),
        ...readParameters(info, url),
        code,
      });
    };
    const past: HistoricalRoute =
      run !== undefined && this.history ? this.history.route(info, read.url, run) : { kind: "pass" };
    if (past.kind === "refuse-watch-list") {
      record(422, read.url);
      respondStatus(res, 422, "Invalid", past.message);
      return;
    }
    const path = past.kind === "list-from-past" ? past.path : read.url;
    const controller = new AbortController();
    // The client went away (a cancelled watch): stop the upstream request too.
    res.on("close", () => {
      if (!res.writableFinished) controller.abort();
    });
    const upstreamReq = await this.deps.connection.open({
      method: read.method,
      path,
      headers: read.headers,
      signal: controller.signal,
    });
    upstreamReq.on("response", (upstreamRes) => {
      const status = upstreamRes.statusCode ?? 502;
      record(status, path);
      if (past.kind === "list-from-past") past.list.code = status;
      if (past.kind === "watch-from-past") past.watch.code = status;
      if (past.kind === "list-from-past" && status !== 200) {
        // The past is gone (compacted) or refused: the proof keeps the server's words, the operator
        // gets its answer as it came (its reflector retries with a list of the present).
        void readStream(upstreamRes).then(
          (body) => {
            past.list.refusal = statusMessage(body);
            res.writeHead(status, filterHeaders(upstreamRes.headers));
            res.end(body);
          },
          () => res.destroy(),
        );
        return;
      }
      res.writeHead(status, filterHeaders(upstreamRes.headers));
      const watching = info.verb === "watch" && status === 200;
      // A watch's headers must leave now (its first event may be minutes away); any other answer's
      // go out with its first bytes: one TLS write instead of two.
      if (watching) res.flushHeaders();
      if (watching && actor === "operator") {
        this.operatorWatches.add(res);
        res.once("close", () => this.operatorWatches.delete(res));
      }
      const body = watching
        ? upstreamRes.pipe(
            watchEventStream(upstreamRes.headers["content-type"], {
              contentEncoding: upstreamRes.headers["content-encoding"],
              ...(actor === "operator"
                ? {
                    onEvent: (event) => {
                      if (past.kind === "watch-from-past" && event.type === "ERROR")
                        past.watch.error ??= watchErrorText(event.bytes);
                      this.recordDelivery(info, run, event);
                    },
                    gate: (send) =>
                      this.deps.watchFaults.gateFor(info, send, res, {
                        sendsInitialEvents: /[?&]sendInitialEvents=true(&|$)/.test(read.url),
                      }),
                  }
                : {}),
            }),
          )
        : upstreamRes;
      body.pipe(res);
      upstreamRes.on("error", () => res.destroy());
    });
    upstreamReq.on("error", (error) => {
      if (!res.headersSent) respondStatus(res, 502, "BadGateway", `upstream: ${error.message}`);
      else res.destroy();
    });
    req.pipe(upstreamReq);
  }

  /** Notes a watch event passed to the operator: what it could know, and from when. */
  private recordDelivery(info: RequestInfo, run: number | undefined, event: WatchEvent): void {
    const { type, object } = event;
    if (type !== "ADDED" && type !== "MODIFIED" && type !== "DELETED") return;
    if (!object?.name || !object.resourceVersion) return;
    this.deps.log.deliver(
      {
        type,
        group: info.group,
        resource: info.resource,
        ...(object.namespace ? { namespace: object.namespace } : {}),
        name: object.name,
        resourceVersion: object.resourceVersion,
        ...(run === undefined ? {} : { run }),
        beforeWriteSeq: this.deps.writeLog.nextSeqToTake,
      },
      this.deps.clock.now(),
    );
  }
}

/** The message of a Status body (JSON), or its first bytes. */
function statusMessage(body: Buffer): string {
  try {
    const status = JSON.parse(body.toString("utf8")) as { message?: unknown };
    if (typeof status.message === "string") return status.message;
  } catch {
    // not JSON
  }
  return body.subarray(0, 200).toString("utf8");
}
