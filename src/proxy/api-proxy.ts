import { join } from "node:path";
import { stringify } from "yaml";
import { KubeConfig } from "@kubernetes/client-node";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type http from "node:http";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { describeError, InfrastructureError } from "../errors.js";
import { ApiServerConnection, type OutgoingHeaders } from "../kube/api-server-connection.js";
import { KubeClient } from "../kube/kube-client.js";
import { isoNow, systemClock, type Clock } from "../util/clock.js";
import { silentLogger, type Logger } from "../util/logger.js";
import { pollUntil } from "../util/poll.js";
import { readStream } from "../util/streams.js";
import { FaultPlan, type ArmedFault, type FaultSpec, type KillRecord } from "./faults.js";
import type { HistoricalReadProof, HistoricalReadSpec } from "./historical-reads.js";
import { filterHeaders, respondStatus } from "./http-messages.js";
import { OperatorActivity } from "./operator-activity.js";
import { proxyKubeconfig, writeProxyKubeconfig } from "./operator-kubeconfig.js";
import { createProxyCertificate, type ProxyCertificate } from "./proxy-certificate.js";
import { ReadHandler } from "./read-handler.js";
import { ReadLog, type ReadQuery } from "./read-log.js";
import { classifyRequest, isMutating, type RequestInfo } from "./request-classifier.js";
import { WatchFaults, type ArmedWatchFault, type WatchFaultSpec } from "./watch-faults.js";
import { WriteHandler, type WriteAnswer } from "./write-handler.js";
import { WriteLog, type WriteEntry } from "./write-log.js";
import { registerSecret } from "../util/secrets.js";

export { CONCURRENT_WRITE_ANNOTATION } from "./fault-actions.js";

export interface ApiProxyOptions {
  /** The cluster to forward to, with credentials the proxy uses for every request. */
  readonly upstream: { readonly kubeconfigPath: string; readonly context: string };
  /**
   * The address to listen on (default 127.0.0.1, this machine only); the
   * certificate is made for it. An operator in a kind node's Pod reaches
   * the host at the gateway of kind's Docker network.
   */
  readonly listenAddress?: string;
  /** Mirror the logs as NDJSON files in this directory: writes.ndjson, reads.ndjson, watch-events.ndjson. */
  readonly logDir?: string;
  /**
   * Forward the operator's requests as this identity, so its real RBAC
   * applies. Off by default; then the operator's own Impersonate-* headers
   * pass through.
   */
  readonly impersonate?: { readonly user: string; readonly groups?: readonly string[] };
  /**
   * Count only the operator's writes in this namespace (and cluster-scoped
   * ones) when judging whether it is quiet. A cluster-wide operator keeps
   * reconciling the namespaces of earlier scenarios while they terminate
   * (and retries its refused creates there); those writes say nothing about
   * this scenario. They are still logged.
   */
  readonly quietNamespace?: string;
  readonly logger?: Logger;
  readonly clock?: Clock;
}

/** What `waitQuiet` saw. */
export interface QuietReport {
  /** Operator writes a fault left unanswered on purpose: they will never complete, so they were not waited for. */
  readonly hung: readonly WriteEntry[];
}

/**
 * An HTTP reverse proxy on 127.0.0.1 that is the operator's only door to the
 * API server. Only requests carrying the run's bearer token get through: the
 * operator's (its kubeconfig has it) or the kit's own. Every read goes
 * through the read handler, which streams it through untouched (watches
 * event by event, at one seam a later fault can act on) and logs it; every
 * write goes through the write handler, which logs it with an exact effect
 * and lets armed faults act on exactly the write they match. The
 * operator's writes are its activity, which quiet detection reads.
 */
export class ApiProxy {
  readonly writeLog: WriteLog;
  readonly readLog: ReadLog;
  readonly faults: FaultPlan;
  private readonly writes: WriteHandler;
  private readonly reads: ReadHandler;
  private readonly activity: OperatorActivity;
  private readonly sockets = new Set<Socket>();
  /** The operator's token; replaced (the old one refused from then on) by revokeOperatorToken. */
  private operatorToken = secret(randomBytes(32).toString("hex"));
  private readonly kitToken = secret(randomBytes(32).toString("hex"));
  private crashHandler: (() => Promise<KillRecord>) | undefined;
  /** The operator's watch faults (hold, coalesce) and the gates of its open watch streams. */
  private readonly watchFaults = new WatchFaults();
  private operatorRun = 0;
  private operatorRequests = 0;
  private refusedRequests = 0;
  private readonly clock: Clock;
  private readonly logger: Logger;

  private constructor(
    private readonly server: https.Server,
    private readonly connection: ApiServerConnection,
    private readonly certificate: ProxyCertificate,
    private readonly options: ApiProxyOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.activity = new OperatorActivity(this.clock, options.quietNamespace);
    const { logDir } = options;
    this.writeLog = new WriteLog(logDir === undefined ? undefined : join(logDir, "writes.ndjson"));
    this.readLog = new ReadLog(
      logDir === undefined
        ? undefined
        : { reads: join(logDir, "reads.ndjson"), events: join(logDir, "watch-events.ndjson") },
    );
    this.faults = new FaultPlan(this.writeLog);
    this.reads = new ReadHandler({
      connection,
      log: this.readLog,
      writeLog: this.writeLog,
      watchFaults: this.watchFaults,
      clock: this.clock,
    });
    this.writes = new WriteHandler({
      connection,
      log: this.writeLog,
      faults: this.faults,
      clock: this.clock,
      logger: this.logger,
      crash: async () => {
        if (!this.crashHandler) {
          throw new InfrastructureError(
            "proxy/no-crash-handler",
            "crash-after armed, but no operator to crash",
          );
        }
        // The run being killed; the handler may begin the next one before it returns.
        const run = this.operatorRun;
        return { ...(await this.crashHandler()), run };
      },
    });
  }

  static async start(options: ApiProxyOptions): Promise<ApiProxy> {
    const config = new KubeConfig();
    config.loadFromFile(options.upstream.kubeconfigPath);
    config.setCurrentContext(options.upstream.context);
    const connection = new ApiServerConnection(config);
    const host = options.listenAddress ?? "127.0.0.1";
    const certificate = createProxyCertificate({ ip: host });
    const server = https.createServer({ cert: certificate.cert, key: certificate.key });
    const proxy = new ApiProxy(server, connection, certificate, options);
    server.on("connection", (socket: Socket) => {
      // Watch events are small writes that must leave at once, not wait for Nagle.
      socket.setNoDelay(true);
      proxy.sockets.add(socket);
      socket.on("close", () => proxy.sockets.delete(socket));
    });
    server.on("request", (req, res) => {
      proxy.handle(req, res).catch((error: unknown) => {
        proxy.logger.warn(`proxy: ${req.method} ${req.url}: ${describeError(error)}`);
        if (!res.headersSent)
          respondStatus(res, 502, "BadGateway", `reconcile-conformance proxy: ${describeError(error)}`);
        else res.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, host, () => resolve());
    });
    return proxy;
  }

  /** https://<listen address>:<port> */
  get url(): string {
    const address = this.server.address() as AddressInfo;
    return `https://${address.address}:${address.port}`;
  }

  /** The proxy's own certificate (PEM), the CA its kubeconfigs trust. */
  get certificateAuthority(): string {
    return this.certificate.cert;
  }

  /** Called by `crash-after` once the write succeeded; must kill the operator and resolve when it is gone. */
  setCrashHandler(handler: () => Promise<KillRecord>): void {
    this.crashHandler = handler;
  }

  /** The operator's run now starting (1 for the first start, +1 per restart); entries carry it. */
  beginOperatorRun(run: number): void {
    this.operatorRun = run;
  }

  /** Arms a fault for one matching operator write. */
  arm(spec: FaultSpec): ArmedFault {
    return this.faults.arm(spec);
  }

  /**
   * Arms a watch fault on the operator's watches of one resource (those
   * open now and those it opens later) until it is released: `hold` keeps
   * the matched objects' events back, `coalesce` delivers only their last
   * states. Arm it once the operator has synced: it would hold initial
   * events too.
   */
  armWatch(spec: WatchFaultSpec): ArmedWatchFault {
    return this.watchFaults.arm(spec);
  }

  /**
   * Serves the operator's first list of each resource, from run
   * `spec.fromRun` on, from `spec.resourceVersion` (historical-reads.ts):
   * a restarted operator starts from a real past state and catches up
   * through the API server's events. One at a time; `proof` says what was
   * served and whether the API server could.
   */
  armHistory(spec: HistoricalReadSpec): { proof(): HistoricalReadProof } {
    const history = this.reads.armHistory(spec);
    return { proof: () => history.proof() };
  }

  /** Writes a kubeconfig for the operator: the proxy's address and the operator's token. */
  writeKubeconfig(path: string, namespace?: string): Promise<string> {
    return writeProxyKubeconfig(path, this.operatorKubeconfigOptions(namespace));
  }

  /** The operator's kubeconfig as YAML (for a Secret mounted into the operator's Pod). */
  operatorKubeconfigYaml(namespace?: string): string {
    return stringify(proxyKubeconfig(this.operatorKubeconfigOptions(namespace)));
  }

  private operatorKubeconfigOptions(namespace: string | undefined) {
    return {
      server: this.url,
      certificateAuthority: this.certificate.cert,
      token: this.operatorToken,
      user: "operator",
      ...(namespace ? { namespace } : {}),
    };
  }

  /**
   * Refuses the operator's token from now on and makes a new one (which
   * the kubeconfigs written after this carry). An operator in a Pod cannot
   * be killed at once as a process group can: revoking its token is what
   * stops it acting through the proxy the moment the kit decides, while
   * its Pod is being deleted.
   */
  revokeOperatorToken(): void {
    this.operatorToken = secret(randomBytes(32).toString("hex"));
    // Its open watches too: a killed process's would close with it; a Pod's would go on for as long
    // as its container takes to stop, feeding a dead run events.
    this.reads.closeOperatorWatches();
  }

  /**
   * The kit's own client through the proxy: every write it makes during a
   * scenario (touches, perturbations, spec updates) is logged as
   * `actor: kit`, numbered in the same sequence as the operator's, with the
   * same exact effects. Faults never act on it.
   */
  kitClient(): KubeClient {
    const config = new KubeConfig();
    config.loadFromString(
      JSON.stringify(
        proxyKubeconfig({
          server: this.url,
          certificateAuthority: this.certificate.cert,
          token: this.kitToken,
          user: "kit",
        }),
      ),
    );
    return KubeClient.fromConfig(config);
  }

  /** Operator requests (of any kind) the proxy has received; 0 means the operator never reached it. */
  get operatorRequestCount(): number {
    return this.operatorRequests;
  }

  /** Requests refused for a missing or wrong token. */
  get refusedRequestCount(): number {
    return this.refusedRequests;
  }

  /** True when the operator's list or watch matching `match` was answered (after read `since`). */
  sawRead(match: ReadQuery, since = 0): boolean {
    return this.readLog
      .query({ ...match, actor: "operator", after: since, succeeded: true })
      .some((r) => r.verb === "list" || r.verb === "watch");
  }

  /** The read log's last sequence number; pass as `since` to wait for a later read. */
  get readCount(): number {
    return this.readLog.lastSeq;
  }

  /** Operator writes received and not yet answered, hung ones excepted: convergence needs zero. */
  get inFlightWrites(): number {
    return this.activity.inFlightWrites;
  }

  /** When the proxy last delivered a watch event to the operator (the run's clock); undefined before the first. */
  get lastDeliveryAt(): number | undefined {
    return this.readLog.lastDeliveryAt;
  }

  /** How long since the operator's last write arrived or completed, in ms (for convergence polls). */
  get operatorIdleMs(): number {
    return this.activity.idleMs;
  }

  /**
   * Resolves once no operator write has been in flight or completed for
   * `quietMs`. A write a fault hangs on purpose is reported, not waited for.
   * What it cannot see: an operator that is idle only because a timer
   * (controller-runtime's RequeueAfter, a resync period) has not fired yet
   * looks quiet until it does.
   */
  async waitQuiet(options: {
    quietMs: number;
    timeoutMs: number;
    signal?: AbortSignal;
  }): Promise<QuietReport> {
    await pollUntil(
      () => {
        const inFlight = this.activity.inFlightWrites;
        if (inFlight > 0) return { done: false, reason: `${inFlight} operator write(s) in flight` };
        const idleFor = this.activity.idleMs;
        if (idleFor < options.quietMs)
          return { done: false, reason: `last operator write ${idleFor} ms ago` };
        return { done: true, value: undefined };
      },
      {
        description: `${options.quietMs} ms without operator writes`,
        timeoutMs: options.timeoutMs,
        intervalMs: Math.max(10, Math.min(50, options.quietMs / 5)),
        signal: options.signal,
      },
    );
    return { hung: [...this.writes.hung] };
  }

  /** Stops listening and cuts every open connection (watches included). */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.connection.close();
    await this.writeLog.flush();
    await this.readLog.flush();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const actor = this.authenticate(req.headers.authorization);
    if (actor === undefined) {
      this.refusedRequests++;
      respondStatus(
        res,
        401,
        "Unauthorized",
        "reconcile-conformance proxy: this run's bearer token is required",
      );
      return;
    }
    if (actor === "operator") this.operatorRequests++;
    const info = classifyRequest(req.method ?? "GET", req.url ?? "/", req.headers["content-type"]);
    if (isMutating(info.verb)) return this.handleWrite(req, res, actor, info);
    return this.reads.handle(
      {
        actor,
        ...(actor === "operator" ? { run: this.operatorRun } : {}),
        info,
        method: req.method ?? "GET",
        url: req.url ?? "/",
        headers: this.forwardHeaders(req.headers, actor),
        time: isoNow(this.clock),
      },
      req,
      res,
    );
  }

  /** Which token the request carries, compared in constant time; undefined for none or a wrong one. */
  private authenticate(header: string | undefined): "operator" | "kit" | undefined {
    const presented = /^Bearer\s+(\S+)$/i.exec(header ?? "")?.[1];
    if (!presented) return undefined;
    const digest = (token: string) => createHash("sha256").update(token).digest();
    const given = digest(presented);
    if (timingSafeEqual(given, digest(this.operatorToken))) return "operator";
    if (timingSafeEqual(given, digest(this.kitToken))) return "kit";
    return undefined;
  }

  /** Hands a write to the write handler, as operator activity when it counts, and sends its answer. */
  private async handleWrite(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    actor: "operator" | "kit",
    info: RequestInfo,
  ): Promise<void> {
    const time = isoNow(this.clock);
    const run = actor === "operator" ? this.operatorRun : undefined;
    const ended = this.activity.begin({ actor, namespace: info.namespace });
    let answer: WriteAnswer | undefined;
    try {
      const body = await readStream(req);
      const write = {
        actor,
        ...(run === undefined ? {} : { run }),
        method: req.method ?? "POST",
        url: req.url ?? "/",
        headers: this.forwardHeaders(req.headers, actor),
        body,
        time,
      };
      answer =
        actor === "kit"
          ? { kind: "answer", answer: (await this.writes.kitWrite(write)).answer }
          : await this.writes.handle(write);
    } finally {
      ended();
    }
    switch (answer.kind) {
      case "answer":
        res.writeHead(answer.answer.status, filterHeaders(answer.answer.headers));
        res.end(answer.answer.body);
        return;
      case "status":
        if (answer.retryAfterSeconds !== undefined)
          res.setHeader("Retry-After", String(answer.retryAfterSeconds));
        respondStatus(res, answer.status, answer.reason, answer.message);
        return;
      case "hang":
        return; // never answered; the client times out and closes
      case "cut":
        req.socket.destroy(); // the operator never learns what became of the write
        return;
    }
  }

  /**
   * The client's headers minus hop-by-hop ones and its credentials; the
   * operator's requests impersonate its identity when asked (the kit's own
   * writes keep the kit's access).
   */
  private forwardHeaders(incoming: http.IncomingHttpHeaders, actor: "operator" | "kit"): OutgoingHeaders {
    const headers: OutgoingHeaders = filterHeaders(incoming);
    delete headers.authorization;
    delete headers["content-length"];
    const impersonate = actor === "operator" ? this.options.impersonate : undefined;
    if (impersonate) {
      for (const key of Object.keys(headers)) if (key.startsWith("impersonate-")) delete headers[key];
      headers["Impersonate-User"] = impersonate.user;
      if (impersonate.groups?.length) headers["Impersonate-Group"] = [...impersonate.groups];
    }
    return headers;
  }
}

/** A token of this run, registered so that a job log masks it. */
function secret(token: string): string {
  registerSecret(token);
  return token;
}
