import type { KubeConfig } from "@kubernetes/client-node";
import http from "node:http";
import https from "node:https";
import tls from "node:tls";
import { InfrastructureError } from "../errors.js";
import { readStream } from "../util/streams.js";

/** Headers as Node's http module takes them. */
export type OutgoingHeaders = Record<string, string | string[] | number>;

export interface ConnectionRequest {
  readonly method: string;
  /** Path and query, e.g. `/api/v1/namespaces/ns/configmaps?watch=1`. */
  readonly path: string;
  readonly headers?: OutgoingHeaders;
  readonly signal?: AbortSignal;
  /** Abandon the request after this long without activity; 0 or absent for none (watches). */
  readonly idleTimeoutMs?: number;
  /**
   * Asked at the last moment, after every await, right before the request
   * is issued: false withholds it (RequestWithheld is thrown). The proxy's
   * crash-after uses it so that no write of a killed operator slips out.
   */
  readonly shouldSend?: () => boolean;
}

/** A request `shouldSend` withheld: nothing was sent. */
export class RequestWithheld extends Error {
  override readonly name = "RequestWithheld";
}

/** A whole answer, for small bodies (writes, single objects, the kit's own calls). */
export interface BufferedAnswer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

/** How long credentials read from the kubeconfig are reused before they are read again. */
const CREDENTIALS_TTL_MS = 10_000;

/**
 * The one HTTP stack the kit uses to reach an API server: the kube facade
 * and the API proxy both send through it. Credentials (client certificate,
 * CA, bearer token, exec plugins) come from the kubeconfig and are read
 * again every few seconds and after any 401, so a token that expires and is
 * refreshed during a long run keeps working; reading them for every request
 * (files, and an agent client-node builds each time) would cost the proxy
 * more than its whole budget per request. Connections are kept alive in one
 * agent.
 */
export class ApiServerConnection {
  readonly url: URL;
  private readonly agent: http.Agent;
  private credentials: { readonly options: https.RequestOptions; readonly until: number } | undefined;

  constructor(readonly config: KubeConfig) {
    const cluster = config.getCurrentCluster();
    if (!cluster) throw new InfrastructureError("kube/no-cluster", "kubeconfig has no current cluster");
    this.url = new URL(cluster.server);
    this.agent = this.secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  }

  private get secure(): boolean {
    return this.url.protocol === "https:";
  }

  /**
   * Opens a request with the kubeconfig's credentials; the caller writes the
   * body and ends it. Headers given here win over none of the credentials:
   * the kubeconfig's Authorization replaces any the caller passed.
   */
  async open(request: ConnectionRequest): Promise<http.ClientRequest> {
    const credentials = await this.currentCredentials();
    const options: https.RequestOptions = {
      ...credentials,
      method: request.method,
      hostname: this.url.hostname,
      port: this.url.port,
      path: request.path,
      headers: { ...request.headers, ...credentials.headers },
      signal: request.signal,
      agent: this.agent, // ours, kept alive, instead of the one-off agent client-node makes
    };
    if (request.shouldSend && !request.shouldSend()) {
      throw new RequestWithheld(`${request.method} ${request.path}: withheld`);
    }
    const transport = this.secure ? https : http;
    const outgoing = transport.request(options);
    outgoing.on("response", (response) => {
      if (response.statusCode === 401) this.credentials = undefined; // read them afresh next time
    });
    const idle = request.idleTimeoutMs ?? 0;
    if (idle > 0) {
      outgoing.setTimeout(idle, () =>
        outgoing.destroy(new Error(`${request.method} ${request.path}: no answer within ${idle / 1000} s`)),
      );
    }
    return outgoing;
  }

  /** TLS material and headers from the kubeconfig, reused for CREDENTIALS_TTL_MS. */
  private async currentCredentials(): Promise<https.RequestOptions> {
    const now = Date.now();
    if (this.credentials && now < this.credentials.until) return this.credentials.options;
    const applied: https.RequestOptions = { headers: {} };
    if (this.secure) {
      // Sets ca/cert/key and the Authorization header (running exec plugins when needed).
      await this.config.applyToHTTPSOptions(applied);
    } else {
      // client-node builds no agent for plain HTTP; a token is all such a server takes.
      const token = this.config.getCurrentUser()?.token;
      if (token) (applied.headers as OutgoingHeaders).Authorization = `Bearer ${token}`;
    }
    const { ca, cert, key, pfx, passphrase, rejectUnauthorized, servername, headers, auth } = applied;
    const tlsMaterial = { ca, cert, key, pfx, passphrase };
    const options: https.RequestOptions = Object.fromEntries(
      Object.entries({
        ...tlsMaterial,
        // Built once per reading of the credentials: without it every new socket (each watch
        // holds one) builds its own from ca/cert/key, a cost the profile of a run showed. The
        // material stays in the options too, so the agent pools sockets by it as before.
        secureContext: this.secure ? tls.createSecureContext(definedOnly(tlsMaterial)) : undefined,
        rejectUnauthorized,
        servername,
        headers,
        auth,
      }).filter(([, value]) => value !== undefined),
    );
    this.credentials = { options, until: now + CREDENTIALS_TTL_MS };
    return options;
  }

  /** Sends a request with an optional body and resolves with the response head (body still streaming). */
  async send(request: ConnectionRequest, body?: Buffer | string): Promise<http.IncomingMessage> {
    try {
      return await this.sendOnce(request, body);
    } catch (error) {
      // A kept-alive socket the server closed while idle fails the next request on it at once
      // ("read ECONNRESET"), before the server saw it: Node's documented race. A read is sent
      // again, once, on a fresh socket; a write is not (the kit never guesses whether it landed).
      if (!(error instanceof ReusedSocketReset) || request.method !== "GET") throw unwrapReset(error);
      return this.sendOnce(request, body).catch((again: unknown) => {
        throw unwrapReset(again);
      });
    }
  }

  private async sendOnce(request: ConnectionRequest, body?: Buffer | string): Promise<http.IncomingMessage> {
    const outgoing = await this.open({
      ...request,
      headers: {
        ...request.headers,
        ...(body === undefined ? {} : { "Content-Length": Buffer.byteLength(body) }),
      },
    });
    return new Promise((resolve, reject) => {
      outgoing.on("response", resolve);
      outgoing.on("error", (error: NodeJS.ErrnoException) =>
        reject(outgoing.reusedSocket && error.code === "ECONNRESET" ? new ReusedSocketReset(error) : error),
      );
      outgoing.end(body);
    });
  }

  /** Sends and reads the whole answer. */
  async exchange(request: ConnectionRequest, body?: Buffer | string): Promise<BufferedAnswer> {
    const response = await this.send(request, body);
    return { status: response.statusCode ?? 0, headers: response.headers, body: await readStream(response) };
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.agent.destroy();
  }
}

/** A reset of a kept-alive socket before any answer: the request never reached the server. */
class ReusedSocketReset extends Error {
  constructor(readonly reset: Error) {
    super(reset.message);
  }
}

function unwrapReset(error: unknown): unknown {
  return error instanceof ReusedSocketReset ? error.reset : error;
}

function definedOnly<T extends object>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as Partial<T>;
}
