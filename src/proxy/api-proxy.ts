import { KubeConfig } from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import http from "node:http";
import { isDeepStrictEqual } from "node:util";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { InfrastructureError } from "../errors.js";
import type { Logger } from "../util/logger.js";
import { silentLogger } from "../util/logger.js";
import { readStream } from "../util/streams.js";
import { FaultPlan, type FaultSpec } from "./faults.js";
import { protobufMetadata, protobufStatusReason } from "./protobuf-metadata.js";
import { classifyRequest, describeRequest, isMutating, type RequestInfo } from "./request-classifier.js";
import { tagOf, WriteLog, type WriteEntry } from "./write-log.js";

/** The annotation `conflict-before` writes to make the operator's precondition stale. */
export const CONCURRENT_WRITE_ANNOTATION = "reconcile-conformance.dev/concurrent-write";

export interface ApiProxyOptions {
  /** The cluster to forward to, with credentials the proxy uses for every request. */
  readonly upstream: { readonly kubeconfigPath: string; readonly context: string };
  /** Mirror the write log to this NDJSON file. */
  readonly writeLogFile?: string;
  /** Forward the operator's requests as this identity, so its real RBAC applies. Off by default. */
  readonly impersonate?: { readonly user: string; readonly groups?: readonly string[] };
  readonly logger?: Logger;
}

/** A read the operator made of a collection: how "started" is recognised. */
export interface CollectionRead {
  readonly verb: "list" | "watch";
  readonly group: string;
  readonly resource: string;
  readonly namespace?: string;
}

interface Upstream {
  readonly url: URL;
  readonly agent: https.Agent | http.Agent;
  readonly headers: Readonly<Record<string, string>>;
}

// Headers that describe one connection, never forwarded (RFC 9110 section 7.6.1).
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
]);

/**
 * An HTTP reverse proxy on 127.0.0.1 that is the operator's only door to the
 * API server. Reads and watches stream through untouched; every write is
 * recorded in the write log, and armed faults act on exactly the write they
 * match. The operator talks plain HTTP to it; it talks TLS upstream with the
 * cluster's credentials.
 */
export class ApiProxy {
  readonly writeLog: WriteLog;
  readonly faults = new FaultPlan();
  private readonly reads: CollectionRead[] = [];
  private readonly sockets = new Set<Socket>();
  private crashHandler: (() => Promise<void>) | undefined;
  /** True while crash-after kills the operator: writes it had not sent yet are dropped. */
  private crashing = false;
  private writesInFlight = 0;

  private constructor(
    private readonly server: http.Server,
    private readonly upstream: Upstream,
    private readonly options: ApiProxyOptions,
  ) {
    this.writeLog = new WriteLog(options.writeLogFile);
  }

  static async start(options: ApiProxyOptions): Promise<ApiProxy> {
    const upstream = await connectUpstream(options.upstream.kubeconfigPath, options.upstream.context);
    const server = http.createServer();
    const proxy = new ApiProxy(server, upstream, options);
    server.on("connection", (socket) => {
      // Watch events are small writes that must leave at once, not wait for Nagle.
      socket.setNoDelay(true);
      proxy.sockets.add(socket);
      socket.on("close", () => proxy.sockets.delete(socket));
    });
    server.on("request", (req, res) => {
      proxy.handle(req, res).catch((error: unknown) => {
        (options.logger ?? silentLogger).warn(`proxy: ${req.method} ${req.url}: ${String(error)}`);
        if (!res.headersSent)
          respondStatus(res, 502, "BadGateway", `reconcile-conformance proxy: ${String(error)}`);
        else res.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    return proxy;
  }

  /** http://127.0.0.1:<port> */
  get url(): string {
    const address = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${address.port}`;
  }

  /** Called by `crash-after` once the write succeeded; must kill the operator and resolve when it is gone. */
  setCrashHandler(handler: () => Promise<void>): void {
    this.crashHandler = handler;
  }

  /** Arms a fault for one matching write. */
  arm(spec: FaultSpec) {
    return this.faults.arm(spec);
  }

  /** Writes a kubeconfig that points at the proxy, for the operator. */
  async writeKubeconfig(path: string, namespace?: string): Promise<string> {
    const context = namespace ? `\n    namespace: ${namespace}` : "";
    await writeFile(
      path,
      `apiVersion: v1
kind: Config
clusters:
- name: reconcile-conformance-proxy
  cluster:
    server: ${this.url}
users:
- name: operator
  user: {}
contexts:
- name: reconcile-conformance-proxy
  context:
    cluster: reconcile-conformance-proxy
    user: operator${context}
current-context: reconcile-conformance-proxy
`,
      { mode: 0o600 },
    );
    return path;
  }

  /** True when a list or watch matching `match` was seen (after the first `since` reads). */
  sawRead(match: Partial<CollectionRead>, since = 0): boolean {
    return this.reads
      .slice(since)
      .some(
        (r) =>
          (match.verb === undefined || r.verb === match.verb) &&
          (match.group === undefined || r.group === match.group) &&
          (match.resource === undefined || r.resource === match.resource) &&
          (match.namespace === undefined || r.namespace === undefined || r.namespace === match.namespace),
      );
  }

  /** Operator writes received and not yet answered (or dropped): convergence needs zero. */
  get inFlightWrites(): number {
    return this.writesInFlight;
  }

  /** How many collection reads were seen so far; pass as `since` to wait for a later one. */
  get readCount(): number {
    return this.reads.length;
  }

  /** Stops listening and cuts every open connection (watches included). */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.upstream.agent.destroy();
    await this.writeLog.flush();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const info = classifyRequest(req.method ?? "GET", req.url ?? "/", req.headers["content-type"]);
    if (isMutating(info.verb)) return this.handleWrite(req, res, info);
    this.pipeThrough(req, res, (status) => {
      // Only an answered read counts: a 403 or 404 list is not an operator at work.
      if ((info.verb === "list" || info.verb === "watch") && status >= 200 && status < 300) {
        this.reads.push({
          verb: info.verb,
          group: info.group,
          resource: info.resource,
          ...(info.namespace ? { namespace: info.namespace } : {}),
        });
      }
    });
  }

  /** Streams a request and its answer through unchanged, chunk by chunk. */
  private pipeThrough(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    onStatus: (status: number) => void,
  ): void {
    const upstreamReq = this.upstreamRequest(
      req.method ?? "GET",
      req.url ?? "/",
      this.forwardHeaders(req.headers),
    );
    upstreamReq.on("response", (upstreamRes) => {
      onStatus(upstreamRes.statusCode ?? 502);
      res.writeHead(upstreamRes.statusCode ?? 502, filterHeaders(upstreamRes.headers));
      res.flushHeaders();
      upstreamRes.pipe(res);
      upstreamRes.on("error", () => res.destroy());
    });
    upstreamReq.on("error", (error) => {
      if (!res.headersSent) respondStatus(res, 502, "BadGateway", `upstream: ${error.message}`);
      else res.destroy();
    });
    // The client went away (a cancelled watch): stop the upstream request too.
    res.on("close", () => {
      if (!res.writableFinished) upstreamReq.destroy();
    });
    req.pipe(upstreamReq);
  }

  private async handleWrite(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    requestInfo: RequestInfo,
  ): Promise<void> {
    this.writesInFlight++;
    try {
      await this.handleWriteInFlight(req, res, requestInfo);
    } finally {
      this.writesInFlight--;
    }
  }

  private async handleWriteInFlight(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    requestInfo: RequestInfo,
  ): Promise<void> {
    const time = new Date().toISOString();
    const body = await readStream(req);
    const json = parseJson(body, req.headers["content-type"]);
    const metadata = protobufMetadata(body) ?? objectMetadata(json);
    const info: RequestInfo =
      requestInfo.name || !metadata.name ? requestInfo : { ...requestInfo, name: metadata.name };
    const sentResourceVersion = metadata.resourceVersion ?? deletePrecondition(json);
    const { path: _path, ...identity } = info;
    const entryBase = {
      time,
      ...identity,
      actor: "operator" as const,
      ...(sentResourceVersion ? { sentResourceVersion } : {}),
      ...(tagOf(info) ? { tag: tagOf(info) } : {}),
      ...(json === undefined ? {} : { body: json }),
    };

    // Faults that act before the write reaches the server; crash-after waits for the answer.
    const fault = this.faults.take(
      info,
      (spec) =>
        spec.kind === "fail-with" || (spec.kind === "conflict-before" && Boolean(sentResourceVersion)),
    );
    if (fault?.spec.kind === "fail-with") {
      const spec = fault.spec;
      const seq = this.writeLog.takeSeq();
      this.writeLog.append({
        ...entryBase,
        seq,
        code: spec.status === "hang" ? 0 : spec.status,
        fault: "fail-with",
      });
      fault.fire(seq);
      if (spec.status === "hang") return; // never answered; the client times out and closes
      if (spec.retryAfterSeconds !== undefined) res.setHeader("Retry-After", String(spec.retryAfterSeconds));
      respondStatus(
        res,
        spec.status,
        reasonFor(spec.status),
        "injected by reconcile-conformance (fail-with)",
      );
      return;
    }
    if (fault?.spec.kind === "conflict-before") {
      await this.concurrentWrite(info).catch((error: unknown) => {
        fault.fail(error);
        throw error;
      });
    }

    // A write without a precondition says nothing of the state it changed; read it
    // first so the log can tell a write that changed nothing from one that did.
    const prior =
      !sentResourceVersion && (info.verb === "update" || info.verb === "patch")
        ? await this.currentObject(info)
        : undefined;

    if (this.crashing) {
      // The operator is being killed: a write it had not yet sent never happens.
      req.socket.destroy();
      return;
    }
    // Sequence numbers follow the order in which writes reach the API server.
    const seq = this.writeLog.takeSeq();
    const answer = await this.forwardBuffered(req, body);
    const answered = parseJson(answer.body, answer.headers["content-type"]);
    const resultMeta = protobufMetadata(answer.body) ?? objectMetadata(answered);
    const ok = answer.status >= 200 && answer.status < 300;
    const crash = ok ? this.faults.take(info, (spec) => spec.kind === "crash-after") : undefined;
    if (crash) this.crashing = true; // from here on, no other operator write gets through
    const acting = fault ?? crash;
    const entry: WriteEntry = {
      ...entryBase,
      seq,
      ...(prior?.resourceVersion ? { priorResourceVersion: prior.resourceVersion } : {}),
      code: answer.status,
      ...(ok ? {} : { reason: statusReason(answered) ?? protobufStatusReason(answer.body) }),
      ...(ok && resultMeta.uid ? { uid: resultMeta.uid } : {}),
      ...(ok && resultMeta.resourceVersion ? { resourceVersion: resultMeta.resourceVersion } : {}),
      ...(ok && resultMeta.generation !== undefined ? { generation: resultMeta.generation } : {}),
      ...(ok && resultMeta.name && !info.name ? { name: resultMeta.name } : {}),
      ...(ok ? effectiveness(info, sentResourceVersion, prior, resultMeta.resourceVersion, answered) : {}),
      ...(acting ? { fault: acting.spec.kind } : {}),
    };
    this.writeLog.append(entry);

    if (crash) {
      try {
        if (!this.crashHandler) {
          throw new InfrastructureError(
            "proxy/no-crash-handler",
            "crash-after armed, but no operator to crash",
          );
        }
        await this.crashHandler();
      } catch (error) {
        crash.fail(error);
        throw error;
      } finally {
        this.crashing = false;
      }
      req.socket.destroy(); // the operator never learns the write succeeded
      crash.fire(seq);
      return;
    }
    res.writeHead(answer.status, filterHeaders(answer.headers));
    res.end(answer.body);
    fault?.fire(seq);
  }

  /** The kit's own write between the operator's read and its write: the API server will answer 409. */
  private async concurrentWrite(info: RequestInfo): Promise<void> {
    const nonce = randomBytes(4).toString("hex");
    const path = objectPath(info);
    const patch = JSON.stringify({ metadata: { annotations: { [CONCURRENT_WRITE_ANNOTATION]: nonce } } });
    const seq = this.writeLog.takeSeq();
    const answer = await this.send(
      "PATCH",
      path,
      { "Content-Type": "application/merge-patch+json" },
      Buffer.from(patch),
    );
    const meta = objectMetadata(parseJson(answer.body, answer.headers["content-type"]));
    const { path: _path, subresource: _subresource, ...identity } = info;
    this.writeLog.append({
      seq,
      time: new Date().toISOString(),
      ...identity,
      verb: "patch",
      patchType: "merge",
      code: answer.status,
      ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
      body: JSON.parse(patch) as unknown,
      fault: "conflict-before",
      actor: "kit",
    });
    if (answer.status >= 300) {
      throw new InfrastructureError(
        "proxy/concurrent-write-failed",
        `conflict-before: the concurrent write to ${describeRequest(info)} failed with ${answer.status}`,
      );
    }
  }

  /** The object as stored now (JSON), for telling an effective write from a no-op. */
  private async currentObject(
    info: RequestInfo,
  ): Promise<{ resourceVersion?: string; object: unknown } | undefined> {
    const answer = await this.send("GET", objectPath(info), { Accept: "application/json" });
    if (answer.status !== 200) return undefined;
    const object = parseJson(answer.body, answer.headers["content-type"]);
    return { resourceVersion: objectMetadata(object).resourceVersion, object };
  }

  private forwardBuffered(req: http.IncomingMessage, body: Buffer) {
    return this.send(req.method ?? "POST", req.url ?? "/", this.forwardHeaders(req.headers), body);
  }

  /** One upstream request with a buffered answer (writes and the kit's own calls are small). */
  private send(
    method: string,
    path: string,
    headers: Record<string, string | string[]>,
    body?: Buffer,
  ): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const request = this.upstreamRequest(method, path, {
        ...headers,
        ...(body ? { "Content-Length": String(body.length) } : {}),
      });
      request.on("response", (response) => {
        readStream(response).then(
          (data) => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: data }),
          reject,
        );
      });
      request.on("error", reject);
      request.end(body);
    });
  }

  private upstreamRequest(
    method: string,
    path: string,
    headers: Record<string, string | string[]>,
  ): http.ClientRequest {
    const { url, agent } = this.upstream;
    const transport = url.protocol === "https:" ? https : http;
    return transport.request({
      agent,
      method,
      hostname: url.hostname,
      port: url.port,
      path,
      headers: { ...headers, ...this.upstream.headers },
    });
  }

  /** The operator's headers minus hop-by-hop ones and any credentials it sent; impersonation if asked. */
  private forwardHeaders(incoming: http.IncomingHttpHeaders): Record<string, string | string[]> {
    const headers = filterHeaders(incoming);
    delete headers.authorization;
    for (const key of Object.keys(headers)) if (key.startsWith("impersonate-")) delete headers[key];
    const impersonate = this.options.impersonate;
    if (impersonate) {
      headers["Impersonate-User"] = impersonate.user;
      if (impersonate.groups?.length) headers["Impersonate-Group"] = [...impersonate.groups];
    }
    return headers;
  }
}

async function connectUpstream(kubeconfigPath: string, context: string): Promise<Upstream> {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfigPath);
  config.setCurrentContext(context);
  const cluster = config.getCurrentCluster();
  if (!cluster)
    throw new InfrastructureError(
      "proxy/no-cluster",
      `kubeconfig ${kubeconfigPath} has no cluster for "${context}"`,
    );
  const tls: https.RequestOptions = {};
  await config.applyToHTTPSOptions(tls);
  const url = new URL(cluster.server);
  const agentOptions = {
    keepAlive: true,
    ca: tls.ca,
    cert: tls.cert,
    key: tls.key,
    rejectUnauthorized: tls.rejectUnauthorized,
    servername: tls.servername,
  };
  const agent =
    url.protocol === "https:" ? new https.Agent(agentOptions) : new http.Agent({ keepAlive: true });
  const headers: Record<string, string> = {};
  const authorization = (tls.headers as Record<string, unknown> | undefined)?.Authorization;
  if (typeof authorization === "string") headers.Authorization = authorization;
  return { url, agent, headers };
}

/**
 * Whether a successful update or patch changed what is stored. With a
 * precondition, the resourceVersion tells. Without one, the object read just
 * before is compared with the answer, leaving out what moves on its own
 * (resourceVersion, managedFields, and the half of the object this write
 * does not address), so another writer's change in between is not blamed on
 * the operator. A protobuf answer falls back to the resourceVersion.
 */
function effectiveness(
  info: RequestInfo,
  sentResourceVersion: string | undefined,
  prior: { resourceVersion?: string; object: unknown } | undefined,
  resultResourceVersion: string | undefined,
  answered: unknown,
): { effective?: boolean } {
  if (info.verb === "create") return { effective: true };
  if (info.verb !== "update" && info.verb !== "patch") return {};
  if (sentResourceVersion && resultResourceVersion)
    return { effective: resultResourceVersion !== sentResourceVersion };
  if (prior?.object !== undefined && answered !== undefined) {
    const addressed = (value: unknown) => comparable(value, info.subresource);
    return { effective: !isDeepStrictEqual(addressed(prior.object), addressed(answered)) };
  }
  if (prior?.resourceVersion && resultResourceVersion)
    return { effective: resultResourceVersion !== prior.resourceVersion };
  return {};
}

function comparable(value: unknown, subresource: string | undefined): unknown {
  if (typeof value !== "object" || value === null) return value;
  const { metadata, status, ...rest } = value as Record<string, unknown>;
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = (metadata ?? {}) as Record<string, unknown>;
  // A status write changes status (and nothing else); a write of the main resource, everything but status.
  return subresource === "status" ? { status } : { ...rest, metadata: meta };
}

function filterHeaders(headers: http.IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(key.toLowerCase())) out[key] = value;
  }
  return out;
}

/** The body as JSON when it is JSON (server-side apply bodies from client-go are JSON too). */
function parseJson(body: Buffer, contentType: string | string[] | undefined): unknown {
  const type = String(contentType ?? "").toLowerCase();
  if (body.length === 0 || !(type.includes("json") || type.includes("apply-patch+yaml"))) return undefined;
  try {
    return JSON.parse(body.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

interface Metadata {
  name?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
}

function objectMetadata(value: unknown): Metadata {
  if (typeof value !== "object" || value === null || !("metadata" in value)) return {};
  const meta = value.metadata;
  if (typeof meta !== "object" || meta === null) return {};
  const field = (key: string) => (key in meta ? (meta as Record<string, unknown>)[key] : undefined);
  const text = (key: string) =>
    typeof field(key) === "string" && field(key) !== "" ? String(field(key)) : undefined;
  const generation = field("generation");
  return {
    name: text("name"),
    uid: text("uid"),
    resourceVersion: text("resourceVersion"),
    generation: typeof generation === "number" ? generation : undefined,
  };
}

/** DeleteOptions.preconditions.resourceVersion: a delete's precondition. */
function deletePrecondition(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || !("preconditions" in value)) return undefined;
  const pre = value.preconditions;
  if (typeof pre !== "object" || pre === null || !("resourceVersion" in pre)) return undefined;
  return typeof pre.resourceVersion === "string" && pre.resourceVersion ? pre.resourceVersion : undefined;
}

function statusReason(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || !("reason" in value)) return undefined;
  return typeof value.reason === "string" ? value.reason : undefined;
}

function reasonFor(status: number): string {
  if (status === 429) return "TooManyRequests";
  if (status === 409) return "Conflict";
  if (status === 504) return "Timeout";
  if (status >= 500) return "InternalError";
  return "BadRequest";
}

function respondStatus(res: http.ServerResponse, code: number, reason: string, message: string): void {
  const body = JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
    code,
  });
  res.writeHead(code, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

/** The path of the object a write addresses (without its subresource). */
function objectPath(info: RequestInfo): string {
  const base = info.group ? `/apis/${info.group}/${info.version}` : `/api/${info.version}`;
  const ns = info.namespace ? `/namespaces/${encodeURIComponent(info.namespace)}` : "";
  return `${base}${ns}/${info.resource}/${encodeURIComponent(info.name ?? "")}`;
}
