import { KubeConfig, type KubernetesObject } from "@kubernetes/client-node";
import type http from "node:http";
import { AbortedError, InfrastructureError } from "../errors.js";
import { readStream } from "../util/streams.js";
import { ApiError, isNotFound } from "./api-errors.js";
import { ApiServerConnection } from "./api-server-connection.js";
import { PATCH_CONTENT_TYPES, type PatchType } from "./patch-types.js";
import { registerSecret } from "../util/secrets.js";

export type { PatchType } from "./patch-types.js";

/** Every write the kit makes carries this field manager, so managedFields attribute it. */
export const FIELD_MANAGER = "reconcile-conformance";

/** Identity of one object. `namespace` is absent for cluster-scoped kinds. */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

/** A Kubernetes object as plain JSON, with the fields every object has typed. */
export type KubeObject = KubernetesObject & Record<string, unknown>;

export interface ListOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly signal?: AbortSignal;
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

export interface WatchHandle {
  /** Stops the watch. */
  stop(): void;
  /** Settles when the stream ends: resolves on a clean close or stop, rejects on an error. */
  readonly done: Promise<void>;
}

interface ResourceInfo {
  readonly plural: string;
  readonly namespaced: boolean;
}

/** A request with no activity for this long is abandoned (watches excepted). */
const REQUEST_TIMEOUT_MS = 30_000;

interface RequestOptions {
  /** Idle timeout; 0 for none (watches). Default REQUEST_TIMEOUT_MS. */
  readonly timeoutMs?: number;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly query?: Readonly<Record<string, string | undefined>>;
  readonly signal?: AbortSignal;
}

/**
 * The kit's narrow door to a cluster: an explicit kubeconfig (never the
 * ambient one), generic object verbs on plain JSON, and a fixed field
 * manager. client-node loads the kubeconfig and supplies credentials; the
 * requests themselves are plain JSON over HTTP so that no field of any object
 * is dropped or reshaped by a typed model on its way to or from the server.
 * API failures throw ApiError (see ./api-errors.ts for isConflict and friends).
 */
export class KubeClient {
  private readonly discovery = new Map<string, Map<string, ResourceInfo>>();
  private readonly connection: ApiServerConnection;

  private constructor(readonly config: KubeConfig) {
    this.connection = new ApiServerConnection(config);
  }

  /** A client for an in-memory kubeconfig (the kit's own door through its proxy, for one). */
  static fromConfig(config: KubeConfig): KubeClient {
    return new KubeClient(config);
  }

  /** Loads a kubeconfig file; `context` defaults to the file's current-context. */
  static fromKubeconfig(path: string, context?: string): KubeClient {
    const config = new KubeConfig();
    try {
      config.loadFromFile(path);
    } catch (error) {
      throw new InfrastructureError("kube/kubeconfig-unreadable", `cannot read kubeconfig ${path}`, [], {
        cause: error,
      });
    }
    if (context) {
      if (!config.getContexts().some((c) => c.name === context)) {
        throw new InfrastructureError(
          "kube/context-missing",
          `kubeconfig ${path} has no context "${context}"`,
        );
      }
      config.setCurrentContext(context);
    }
    const user = config.getCurrentUser();
    for (const secret of [user?.token, user?.keyData, user?.password]) registerSecret(secret);
    return new KubeClient(config);
  }

  /** The API server URL of the current context. */
  get server(): string {
    const cluster = this.config.getCurrentCluster();
    if (!cluster) throw new InfrastructureError("kube/no-cluster", "kubeconfig has no current cluster");
    return cluster.server;
  }

  /** Closes idle keep-alive connections so a finished test or run does not linger. */
  close(): void {
    this.connection.close();
  }

  async get<T extends KubeObject = KubeObject>(ref: ObjectRef, signal?: AbortSignal): Promise<T> {
    return this.json<T>("GET", await this.objectPath(ref), { signal });
  }

  /** Like get, but undefined when the object does not exist. */
  async tryGet<T extends KubeObject = KubeObject>(
    ref: ObjectRef,
    signal?: AbortSignal,
  ): Promise<T | undefined> {
    try {
      return await this.get<T>(ref, signal);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Lists a collection; each item gets its apiVersion and kind back (the server omits them in lists). */
  async list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    options: ListOptions = {},
  ): Promise<T[]> {
    return (await this.listWithVersion<T>(apiVersion, kind, options)).items;
  }

  /** A list and the collection's resourceVersion, from which a watch sees only later changes. */
  async listWithVersion<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    options: ListOptions = {},
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const path = await this.collectionPath(apiVersion, kind, options.namespace);
    const list = await this.json<{ items?: T[]; metadata?: { resourceVersion?: string } }>("GET", path, {
      query: { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector },
      signal: options.signal,
    });
    return {
      items: (list.items ?? []).map((item) => ({ ...item, apiVersion, kind })),
      resourceVersion: list.metadata?.resourceVersion ?? "",
    };
  }

  /** POST; with `dryRun` the server admits and validates it (webhooks included) and stores nothing. */
  async create<T extends KubeObject = KubeObject>(
    object: KubeObject,
    options: { readonly signal?: AbortSignal; readonly dryRun?: boolean } = {},
  ): Promise<T> {
    const ref = refOf(object);
    const path = await this.collectionPath(ref.apiVersion, ref.kind, ref.namespace);
    return this.json<T>("POST", path, {
      body: object,
      query: { fieldManager: FIELD_MANAGER, dryRun: options.dryRun ? "All" : undefined },
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  /**
   * PUT. The object's metadata.resourceVersion, when set, is a precondition:
   * a stale one is answered 409 Conflict. `subresource: "status"` writes status.
   */
  async replace<T extends KubeObject = KubeObject>(
    object: KubeObject,
    options: { subresource?: string } = {},
  ): Promise<T> {
    const path = await this.objectPath(refOf(object), options.subresource);
    return this.json<T>("PUT", path, { body: object, query: { fieldManager: FIELD_MANAGER } });
  }

  /** PATCH; `patch` names the object (apiVersion, kind, metadata.name/namespace). */
  async patch<T extends KubeObject = KubeObject>(
    patch: KubeObject,
    options: { type: PatchType; force?: boolean; subresource?: string; dryRun?: boolean } = { type: "merge" },
  ): Promise<T> {
    const path = await this.objectPath(refOf(patch), options.subresource);
    return this.json<T>("PATCH", path, {
      body: patch,
      contentType: PATCH_CONTENT_TYPES[options.type],
      query: {
        fieldManager: FIELD_MANAGER,
        force: options.force === undefined ? undefined : String(options.force),
        // Admission (webhooks included) and validation run; nothing is stored.
        dryRun: options.dryRun ? "All" : undefined,
      },
    });
  }

  /** A JSON patch (RFC 6902) of the object `ref` names: the way to change one element of a list. */
  async patchJson<T extends KubeObject = KubeObject>(
    ref: ObjectRef,
    operations: readonly unknown[],
  ): Promise<T> {
    return this.json<T>("PATCH", await this.objectPath(ref), {
      body: operations,
      contentType: PATCH_CONTENT_TYPES.json,
      query: { fieldManager: FIELD_MANAGER },
    });
  }

  /**
   * DELETE with DeleteOptions: a propagation policy, a grace period (0: at
   * once), and the object's UID as a precondition (so a newer object of
   * the same name is never deleted by mistake: 409 instead).
   */
  async delete(
    ref: ObjectRef,
    options: {
      propagationPolicy?: "Foreground" | "Background" | "Orphan";
      gracePeriodSeconds?: number;
      uid?: string;
    } = {},
  ): Promise<void> {
    const body = {
      ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}),
      ...(options.gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds: options.gracePeriodSeconds }),
      ...(options.uid ? { preconditions: { uid: options.uid } } : {}),
    };
    await this.json("DELETE", await this.objectPath(ref), {
      body: Object.keys(body).length > 0 ? body : undefined,
    });
  }

  /**
   * Watches a collection from `resourceVersion` (or from now). Events are
   * delivered in order, one per line of the stream as it arrives.
   */
  async watch(
    target: { apiVersion: string; kind: string; namespace?: string },
    onEvent: (type: WatchEventType, object: KubeObject) => void,
    options: { resourceVersion?: string; labelSelector?: string; signal?: AbortSignal } = {},
  ): Promise<WatchHandle> {
    const path = await this.collectionPath(target.apiVersion, target.kind, target.namespace);
    if (options.signal?.aborted) throw new AbortedError(`watch of ${target.kind}: aborted`);
    const controller = new AbortController();
    const stop = () => controller.abort();
    options.signal?.addEventListener("abort", stop, { once: true });
    const response = await this.send("GET", path, {
      query: {
        watch: "true",
        allowWatchBookmarks: "true",
        resourceVersion: options.resourceVersion,
        labelSelector: options.labelSelector,
      },
      signal: controller.signal,
      timeoutMs: 0, // a quiet watch is a healthy watch
    });
    if (response.statusCode !== 200) {
      options.signal?.removeEventListener("abort", stop);
      throw ApiError.fromResponse("GET", path, response.statusCode ?? 0, await readBody(response));
    }
    const done = new Promise<void>((resolve, reject) => {
      let pending = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        pending += chunk;
        let newline: number;
        while ((newline = pending.indexOf("\n")) >= 0) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          if (line.trim() === "") continue;
          try {
            const event = JSON.parse(line) as { type: WatchEventType; object: KubeObject };
            onEvent(event.type, event.object);
          } catch (error) {
            // A bad line or a throwing handler ends this watch, not the process.
            reject(error instanceof Error ? error : new Error(String(error)));
            controller.abort();
            return;
          }
        }
      });
      response.on("end", () => resolve());
      response.on("error", (error) => (controller.signal.aborted ? resolve() : reject(error)));
      response.on("close", () => resolve());
    }).finally(() => options.signal?.removeEventListener("abort", stop));
    // A stream cut while nobody awaits `done` (a stopped cluster) is not an unhandled rejection.
    done.catch(() => undefined);
    return { stop, done };
  }

  /**
   * A GET of a non-resource path such as /readyz or /version, with the
   * kubeconfig's credentials. Returns status and body; never throws on HTTP status.
   */
  async getRaw(path: string, signal?: AbortSignal): Promise<{ status: number; body: string }> {
    const response = await this.send("GET", path, { signal });
    return { status: response.statusCode ?? 0, body: await readBody(response) };
  }

  /** The URL path of a collection, e.g. /apis/apps/v1/namespaces/ns/deployments. */
  async collectionPath(apiVersion: string, kind: string, namespace: string | undefined): Promise<string> {
    const resource = await this.resource(apiVersion, kind);
    const scope = resource.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
    return `${groupVersionPath(apiVersion)}${scope}/${resource.plural}`;
  }

  private async objectPath(ref: ObjectRef, subresource?: string): Promise<string> {
    const resource = await this.resource(ref.apiVersion, ref.kind);
    if (resource.namespaced && !ref.namespace) {
      throw new Error(`${ref.kind} ${ref.name}: namespace required for a namespaced kind`);
    }
    const base = await this.collectionPath(ref.apiVersion, ref.kind, ref.namespace);
    return `${base}/${encodeURIComponent(ref.name)}${subresource ? `/${subresource}` : ""}`;
  }

  /** The plural resource name and scope of a kind, from discovery (NotFound when the server does not serve it). */
  async resourceOf(
    apiVersion: string,
    kind: string,
  ): Promise<{ readonly plural: string; readonly namespaced: boolean }> {
    return this.resource(apiVersion, kind);
  }

  /**
   * The kind served under a plural resource name (the write log knows
   * resources, the facade's verbs take kinds), through the same discovery.
   */
  async kindOf(apiVersion: string, plural: string): Promise<string> {
    for (const refresh of [false, true]) {
      const kinds = await this.discover(apiVersion, refresh);
      for (const [kind, info] of kinds) if (info.plural === plural) return kind;
    }
    throw new ApiError(404, "NotFound", `the server does not serve ${plural} in ${apiVersion}`, undefined);
  }

  /** Resolves a kind to its resource through discovery, refreshing once for kinds added since (new CRDs). */
  private async resource(apiVersion: string, kind: string): Promise<ResourceInfo> {
    for (const refresh of [false, true]) {
      const found = (await this.discover(apiVersion, refresh)).get(kind);
      if (found) return found;
    }
    throw new ApiError(404, "NotFound", `the server does not serve kind ${kind} in ${apiVersion}`, undefined);
  }

  /** The kinds of a group version, from discovery (cached; `refresh` asks again). */
  private async discover(apiVersion: string, refresh: boolean): Promise<Map<string, ResourceInfo>> {
    const cached = refresh ? undefined : this.discovery.get(apiVersion);
    if (cached) return cached;
    const kinds = new Map<string, ResourceInfo>();
    try {
      const list = await this.json<{ resources?: { name: string; kind: string; namespaced: boolean }[] }>(
        "GET",
        groupVersionPath(apiVersion),
      );
      for (const r of list.resources ?? []) {
        if (!r.name.includes("/")) kinds.set(r.kind, { plural: r.name, namespaced: r.namespaced });
      }
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    this.discovery.set(apiVersion, kinds);
    return kinds;
  }

  private async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.send(method, path, options);
    const body = await readBody(response);
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) throw ApiError.fromResponse(method, path, status, body);
    return JSON.parse(body) as T;
  }

  private async send(method: string, path: string, options: RequestOptions): Promise<http.IncomingMessage> {
    const url = new URL(path, this.server);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, value);
    }
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    return this.connection.send(
      {
        method,
        path: url.pathname + url.search,
        headers: {
          Accept: "application/json",
          ...(payload === undefined ? {} : { "Content-Type": options.contentType ?? "application/json" }),
        },
        signal: options.signal,
        // No answer, or no byte of one, for this long: give up rather than hang the run.
        idleTimeoutMs: options.timeoutMs ?? REQUEST_TIMEOUT_MS,
      },
      payload,
    );
  }
}

function groupVersionPath(apiVersion: string): string {
  return apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

function refOf(object: KubeObject): ObjectRef {
  const { apiVersion, kind, metadata } = object;
  if (!apiVersion || !kind || !metadata?.name) {
    throw new Error(
      `object needs apiVersion, kind and metadata.name (got ${apiVersion}/${kind} ${metadata?.name})`,
    );
  }
  return {
    apiVersion,
    kind,
    name: metadata.name,
    ...(metadata.namespace ? { namespace: metadata.namespace } : {}),
  };
}

async function readBody(response: http.IncomingMessage): Promise<string> {
  return (await readStream(response)).toString("utf8");
}
