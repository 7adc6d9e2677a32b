import {
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  Watch,
  type KubernetesObject,
} from "@kubernetes/client-node";
import http from "node:http";
import https from "node:https";
import { InfrastructureError } from "../errors.js";
import { isNotFound } from "./api-errors.js";

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

export type PatchType = "merge" | "strategic" | "json" | "apply";

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

export interface WatchHandle {
  /** Stops the watch; `done` resolves once the stream is closed. */
  stop(): void;
  /** Settles when the stream ends: resolves on a clean close or stop, rejects on an error. */
  readonly done: Promise<void>;
}

const patchContentTypes: Record<PatchType, PatchStrategy> = {
  merge: PatchStrategy.MergePatch,
  strategic: PatchStrategy.StrategicMergePatch,
  json: PatchStrategy.JsonPatch,
  apply: PatchStrategy.ServerSideApply,
};

/** Exposes the discovery-backed URL building that client-node keeps protected. */
class ObjectApi extends KubernetesObjectApi {
  static forConfig(config: KubeConfig): ObjectApi {
    const api = config.makeApiClient(ObjectApi);
    api.setDefaultNamespace(config);
    return api;
  }

  async collectionPath(apiVersion: string, kind: string, namespace: string | undefined): Promise<string> {
    const resource = await this.resource(apiVersion, kind);
    if (!resource) throw new Error(`unknown kind ${kind} in ${apiVersion} (not served by the API server)`);
    const base = this.apiVersionPath(apiVersion);
    const scope = resource.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
    return `${base}${scope}/${resource.name}`;
  }
}

/**
 * The kit's narrow door to a cluster: an explicit kubeconfig (never the
 * ambient one), generic object verbs, and a fixed field manager. Errors from
 * the API server surface as client-node's ApiException; use isConflict and
 * friends from ./api-errors.ts on them.
 */
export class KubeClient {
  private readonly objects: ObjectApi;

  private constructor(readonly config: KubeConfig) {
    this.objects = ObjectApi.forConfig(config);
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
        throw new InfrastructureError("kube/context-missing", `kubeconfig ${path} has no context "${context}"`);
      }
      config.setCurrentContext(context);
    }
    return new KubeClient(config);
  }

  /** The API server URL of the current context. */
  get server(): string {
    const cluster = this.config.getCurrentCluster();
    if (!cluster) throw new InfrastructureError("kube/no-cluster", "kubeconfig has no current cluster");
    return cluster.server;
  }

  async get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T> {
    return (await this.objects.read<KubeObject>(header(ref))) as T;
  }

  /** Like get, but undefined when the object does not exist. */
  async tryGet<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    try {
      return await this.get<T>(ref);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    options: { namespace?: string; labelSelector?: string; fieldSelector?: string } = {},
  ): Promise<T[]> {
    const list = await this.objects.list<KubeObject>(
      apiVersion,
      kind,
      options.namespace,
      undefined,
      undefined,
      undefined,
      options.fieldSelector,
      options.labelSelector,
    );
    return list.items.map((item) => ({ apiVersion, kind, ...item }) as T);
  }

  async create<T extends KubeObject>(object: T): Promise<T> {
    return (await this.objects.create(object, undefined, undefined, FIELD_MANAGER)) as T;
  }

  /** PUT: the object's metadata.resourceVersion, when set, is a precondition. */
  async replace<T extends KubeObject>(object: T): Promise<T> {
    return (await this.objects.replace(object, undefined, undefined, FIELD_MANAGER)) as T;
  }

  /** PATCH; `patch` must name the object (apiVersion, kind, metadata.name/namespace). */
  async patch<T extends KubeObject>(
    patch: KubeObject,
    options: { type: PatchType; force?: boolean } = { type: "merge" },
  ): Promise<T> {
    return (await this.objects.patch(
      patch,
      undefined,
      undefined,
      FIELD_MANAGER,
      options.force,
      patchContentTypes[options.type],
    )) as T;
  }

  async delete(
    ref: ObjectRef,
    options: { propagationPolicy?: "Foreground" | "Background" | "Orphan" } = {},
  ): Promise<void> {
    await this.objects.delete(header(ref), undefined, undefined, undefined, undefined, options.propagationPolicy);
  }

  /**
   * Watches a collection from `resourceVersion` (or from now). Events arrive
   * in order through `onEvent`; `stop()` or `signal` ends the stream.
   */
  async watch(
    target: { apiVersion: string; kind: string; namespace?: string },
    onEvent: (type: WatchEventType, object: KubeObject) => void,
    options: { resourceVersion?: string; labelSelector?: string; signal?: AbortSignal } = {},
  ): Promise<WatchHandle> {
    const path = await this.objects.collectionPath(target.apiVersion, target.kind, target.namespace);
    let settle: { resolve: () => void; reject: (e: unknown) => void } | undefined;
    const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    let stopped = false;
    const controller = await new Watch(this.config).watch(
      path,
      {
        resourceVersion: options.resourceVersion,
        labelSelector: options.labelSelector,
        allowWatchBookmarks: true,
      },
      (type, object) => onEvent(type as WatchEventType, object as KubeObject),
      (error: unknown) => {
        if (error && !stopped) settle?.reject(error);
        else settle?.resolve();
      },
    );
    const stop = () => {
      stopped = true;
      controller.abort();
    };
    options.signal?.addEventListener("abort", stop, { once: true });
    return { stop, done };
  }

  /**
   * A GET of a non-resource path such as /readyz or /version, with the
   * kubeconfig's credentials. Returns status and body; never throws on HTTP status.
   */
  async getRaw(path: string, signal?: AbortSignal): Promise<{ status: number; body: string }> {
    const url = new URL(path, this.server);
    const options: https.RequestOptions = {
      method: "GET",
      hostname: url.hostname,
      port: url.port,
      path: url.pathname + url.search,
      signal,
      timeout: 10_000,
    };
    await this.config.applyToHTTPSOptions(options);
    const transport = url.protocol === "https:" ? https : http;
    return new Promise((resolve, reject) => {
      const request = transport.request(options, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
        response.on("error", reject);
      });
      request.on("timeout", () => request.destroy(new Error(`GET ${path}: no answer within 10 s`)));
      request.on("error", reject);
      request.end();
    });
  }
}

function header(ref: ObjectRef) {
  return {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    metadata: ref.namespace === undefined ? { name: ref.name } : { name: ref.name, namespace: ref.namespace },
  };
}
