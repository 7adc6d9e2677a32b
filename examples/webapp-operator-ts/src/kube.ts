import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1ConfigMap,
  type V1Deployment,
  type V1Service,
} from "@kubernetes/client-node";
import { API_VERSION, GROUP, MANAGER, PLURAL, VERSION, type WebApp } from "./children.ts";
import type { Log } from "./log.ts";

// The API calls the operator makes, through @kubernetes/client-node's typed
// clients, each write logged with the resourceVersion it carried and its answer.

/** Reads, lists and writes of one kind; `namespace` "" lists every namespace. */
export interface KindApi<T extends KubernetesObject> {
  readonly kind: string;
  /** The path an informer watches. */
  listPath(namespace: string): string;
  list(namespace: string): Promise<KubernetesListObject<T>>;
  /** A read from the API server (not a cache). */
  read(namespace: string, name: string): Promise<T>;
  create(namespace: string, body: T): Promise<T>;
  /** A PUT: it carries body.metadata.resourceVersion, so a stale body is refused with 409. */
  replace(namespace: string, name: string, body: T): Promise<T>;
}

export interface Apis {
  readonly webApps: Pick<KindApi<WebApp>, "kind" | "listPath" | "list" | "read"> & {
    /** PUT to the status subresource, with the body's resourceVersion. */
    replaceStatus(namespace: string, name: string, body: WebApp): Promise<WebApp>;
  };
  readonly deployments: KindApi<V1Deployment>;
  readonly services: KindApi<V1Service>;
  readonly configMaps: KindApi<V1ConfigMap>;
}

export function makeApis(config: KubeConfig, log: Log): Apis {
  const apps = config.makeApiClient(AppsV1Api);
  const core = config.makeApiClient(CoreV1Api);
  const custom = config.makeApiClient(CustomObjectsApi);
  const fieldManager = MANAGER;
  const write = writer(log);
  const webApp = { group: GROUP, version: VERSION, plural: PLURAL };
  return {
    webApps: {
      kind: "WebApp",
      listPath: (ns) => `/apis/${GROUP}/${VERSION}/${ns ? `namespaces/${ns}/` : ""}${PLURAL}`,
      list: async (ns) =>
        (ns
          ? await custom.listNamespacedCustomObject({ ...webApp, namespace: ns })
          : await custom.listClusterCustomObject(webApp)) as KubernetesListObject<WebApp>,
      read: async (ns, name) =>
        (await custom.getNamespacedCustomObject({ ...webApp, namespace: ns, name })) as WebApp,
      replaceStatus: (ns, name, body) =>
        write("update status", "WebApp", ns, name, body, async () =>
          asWebApp(
            await custom.replaceNamespacedCustomObjectStatus({
              ...webApp,
              namespace: ns,
              name,
              body: typed(body, API_VERSION, "WebApp"),
              fieldManager,
            }),
          ),
        ),
    },
    deployments: {
      kind: "Deployment",
      listPath: (ns) => `/apis/apps/v1/${ns ? `namespaces/${ns}/` : ""}deployments`,
      list: (ns) =>
        ns ? apps.listNamespacedDeployment({ namespace: ns }) : apps.listDeploymentForAllNamespaces(),
      read: (ns, name) => apps.readNamespacedDeployment({ namespace: ns, name }),
      create: (ns, body) =>
        write("create", "Deployment", ns, nameOf(body), body, () =>
          apps.createNamespacedDeployment({
            namespace: ns,
            body: typed(body, "apps/v1", "Deployment"),
            fieldManager,
          }),
        ),
      replace: (ns, name, body) =>
        write("update", "Deployment", ns, name, body, () =>
          apps.replaceNamespacedDeployment({
            namespace: ns,
            name,
            body: typed(body, "apps/v1", "Deployment"),
            fieldManager,
          }),
        ),
    },
    services: {
      kind: "Service",
      listPath: (ns) => `/api/v1/${ns ? `namespaces/${ns}/` : ""}services`,
      list: (ns) => (ns ? core.listNamespacedService({ namespace: ns }) : core.listServiceForAllNamespaces()),
      read: (ns, name) => core.readNamespacedService({ namespace: ns, name }),
      create: (ns, body) =>
        write("create", "Service", ns, nameOf(body), body, () =>
          core.createNamespacedService({ namespace: ns, body: typed(body, "v1", "Service"), fieldManager }),
        ),
      replace: (ns, name, body) =>
        write("update", "Service", ns, name, body, () =>
          core.replaceNamespacedService({
            namespace: ns,
            name,
            body: typed(body, "v1", "Service"),
            fieldManager,
          }),
        ),
    },
    configMaps: {
      kind: "ConfigMap",
      listPath: (ns) => `/api/v1/${ns ? `namespaces/${ns}/` : ""}configmaps`,
      list: (ns) =>
        ns ? core.listNamespacedConfigMap({ namespace: ns }) : core.listConfigMapForAllNamespaces(),
      read: (ns, name) => core.readNamespacedConfigMap({ namespace: ns, name }),
      create: (ns, body) =>
        write("create", "ConfigMap", ns, nameOf(body), body, () =>
          core.createNamespacedConfigMap({
            namespace: ns,
            body: typed(body, "v1", "ConfigMap"),
            fieldManager,
          }),
        ),
      replace: (ns, name, body) =>
        write("update", "ConfigMap", ns, name, body, () =>
          core.replaceNamespacedConfigMap({
            namespace: ns,
            name,
            body: typed(body, "v1", "ConfigMap"),
            fieldManager,
          }),
        ),
    },
  };
}

function nameOf(object: KubernetesObject): string {
  return object.metadata?.name ?? "";
}

function asWebApp(value: unknown): WebApp {
  return value as WebApp;
}

/**
 * The body of a write: objects listed by the typed clients have no apiVersion
 * and kind of their own, and managedFields are left out so the server keeps
 * what it has (a body without them never changes them).
 */
function typed<T extends KubernetesObject>(body: T, apiVersion: string, kind: string): T {
  const metadata = { ...body.metadata };
  delete metadata.managedFields;
  return { ...body, apiVersion, kind, metadata };
}

/** Runs one write, logging its verb, object, the resourceVersion it carried and the answer. */
function writer(log: Log) {
  return async <T extends KubernetesObject>(
    verb: string,
    kind: string,
    namespace: string,
    name: string,
    body: KubernetesObject,
    call: () => Promise<T>,
  ): Promise<T> => {
    const sent = body.metadata?.resourceVersion ?? "";
    const what = `${verb} ${kind} ${namespace}/${name}${sent ? ` rv=${sent}` : ""}`;
    try {
      const result = await call();
      log.info(`write ${what}: ok rv=${result.metadata?.resourceVersion ?? "?"}`);
      return result;
    } catch (error) {
      log.info(`write ${what}: ${describeError(error)}`);
      throw error;
    }
  };
}

/** The HTTP status of a failed API call, if it got an answer. */
export function statusCode(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

/** 409 to a create: an object of that name exists. */
export const isAlreadyExists = (error: unknown): boolean => statusCode(error) === 409;
/** 409 to an update: the resourceVersion it carried is not the object's any more. */
export const isConflict = (error: unknown): boolean => statusCode(error) === 409;
export const isNotFound = (error: unknown): boolean => statusCode(error) === 404;

/** "409 AlreadyExists: services "hello" already exists", or the error's message. */
export function describeError(error: unknown): string {
  if (error instanceof ApiException) {
    const body: unknown = error.body;
    let status: { reason?: unknown; message?: unknown } = {};
    try {
      status = typeof body === "string" ? (JSON.parse(body) as typeof status) : {};
    } catch {
      // not a Status: the code says enough
    }
    const reason = typeof status.reason === "string" ? ` ${status.reason}` : "";
    const message = typeof status.message === "string" ? `: ${status.message}` : "";
    return `${error.code}${reason}${message}`;
  }
  if (!(error instanceof Error)) return String(error);
  // fetch's "fetch failed" says why in its cause (ECONNREFUSED, a certificate, …).
  return error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
}
