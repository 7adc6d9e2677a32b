import type {
  KubernetesObject,
  V1ConfigMap,
  V1ContainerPort,
  V1Deployment,
  V1ObjectMeta,
  V1OwnerReference,
  V1Service,
  V1ServicePort,
} from "@kubernetes/client-node";
import type { Bug } from "./bugs.ts";

// The WebApp API, the children of a WebApp, their desired state, and the
// comparison of only the fields this operator owns. Everything else on a live
// child (server defaults, other writers' labels and annotations, status) is
// left as it is.

export const GROUP = "demo.reconcile-conformance.dev";
export const VERSION = "v1alpha1";
export const PLURAL = "webapps";
export const API_VERSION = `${GROUP}/${VERSION}`;

export interface WebAppSpec {
  image: string;
  replicas?: number;
  port: number;
  args?: string[];
}

export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface WebAppStatus {
  observedGeneration?: number;
  readyReplicas?: number;
  conditions?: Condition[];
  lastHeartbeatTime?: string;
}

export interface WebApp extends KubernetesObject {
  metadata?: V1ObjectMeta;
  spec: WebAppSpec;
  status?: WebAppStatus;
}

const LABEL_NAME = "app.kubernetes.io/name";
const LABEL_INSTANCE = "app.kubernetes.io/instance";
const LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
export const MANAGER = "webapp-operator-ts";
const CONTAINER = "app";
const PORT_NAME = "http";

/** A child kind: how its desired state is built and compared. */
export interface Child<T extends KubernetesObject> {
  readonly kind: "Deployment" | "Service" | "ConfigMap";
  readonly desired: T;
  /** Copies the managed fields of `desired` into `live` (a copy); true when anything changed. */
  readonly sync: (live: T, desired: T) => boolean;
  /** Owned children carry a controller reference to the WebApp. */
  readonly owned: boolean;
}

export function nameOf(object: KubernetesObject): string {
  return object.metadata?.name ?? "";
}

export function namespaceOf(object: KubernetesObject): string {
  return object.metadata?.namespace ?? "";
}

/** Select the Pods of one WebApp; they never change for its life. */
function selectorLabels(app: WebApp): Record<string, string> {
  return { [LABEL_NAME]: "webapp", [LABEL_INSTANCE]: nameOf(app) };
}

/** Set on every child and on the Pod template. */
function childLabels(app: WebApp): Record<string, string> {
  return { ...selectorLabels(app), [LABEL_MANAGED_BY]: MANAGER };
}

export function controllerReference(app: WebApp): V1OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: "WebApp",
    name: nameOf(app),
    uid: app.metadata?.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The controller reference of an object, if any. */
export function controllerOf(object: KubernetesObject): V1OwnerReference | undefined {
  return object.metadata?.ownerReferences?.find((ref) => ref.controller === true);
}

function metadata(app: WebApp, name: string): V1ObjectMeta {
  return {
    name,
    namespace: namespaceOf(app),
    labels: childLabels(app),
    ownerReferences: [controllerReference(app)],
  };
}

function replicasOf(app: WebApp): number {
  return app.spec.replicas ?? 1;
}

function containerPorts(app: WebApp): V1ContainerPort[] {
  return [{ name: PORT_NAME, containerPort: app.spec.port, protocol: "TCP" }];
}

export function deploymentChild(app: WebApp, bug: Bug): Child<V1Deployment> {
  const args = app.spec.args ?? [];
  return {
    kind: "Deployment",
    owned: true,
    desired: {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: metadata(app, nameOf(app)),
      spec: {
        replicas: replicasOf(app),
        selector: { matchLabels: selectorLabels(app) },
        template: {
          metadata: { labels: childLabels(app) },
          spec: {
            containers: [
              {
                name: CONTAINER,
                image: app.spec.image,
                ...(args.length > 0 ? { args: [...args] } : {}),
                ports: containerPorts(app),
              },
            ],
          },
        },
      },
    },
    sync: (live, desired) => syncDeployment(live, desired, bug),
  };
}

/**
 * Sets labels, replicas, the template's labels and the `app` container's
 * image, args and ports; the selector is immutable and never touched.
 */
function syncDeployment(live: V1Deployment, desired: V1Deployment, bug: Bug): boolean {
  let changed = syncLabels((live.metadata ??= {}), desired.metadata?.labels ?? {});
  const want = desired.spec;
  if (!want) return changed;
  if (bug === "deep-equal-update") {
    // The mistake: the live spec carries the server's defaults (strategy,
    // revisionHistoryLimit, the container's imagePullPolicy, …) in the
    // server's key order, so the texts never match: a write every reconcile.
    if (JSON.stringify(live.spec) !== JSON.stringify(want)) {
      live.spec = structuredClone(want);
      changed = true;
    }
    return changed;
  }
  const spec = (live.spec ??= { selector: structuredClone(want.selector), template: {} });
  if (spec.replicas !== want.replicas) {
    spec.replicas = want.replicas;
    changed = true;
  }
  if (syncLabels((spec.template.metadata ??= {}), want.template.metadata?.labels ?? {})) changed = true;
  const wanted = want.template.spec?.containers[0];
  if (!wanted) return changed;
  const podSpec = (spec.template.spec ??= { containers: [] });
  const container = podSpec.containers.find((c) => c.name === CONTAINER);
  if (!container) {
    podSpec.containers.push(structuredClone(wanted));
    return true;
  }
  if (container.image !== wanted.image) {
    container.image = wanted.image;
    changed = true;
  }
  if (!sameStrings(container.args ?? [], wanted.args ?? [])) {
    container.args = wanted.args ? [...wanted.args] : undefined;
    changed = true;
  }
  const portsEqual = sameList(
    container.ports ?? [],
    wanted.ports ?? [],
    (a, b) =>
      a.name === b.name &&
      a.containerPort === b.containerPort &&
      (a.protocol ?? "TCP") === (b.protocol ?? "TCP"),
  );
  if (!portsEqual) {
    container.ports = structuredClone(wanted.ports);
    changed = true;
  }
  return changed;
}

export function serviceChild(app: WebApp): Child<V1Service> {
  return {
    kind: "Service",
    owned: true,
    desired: {
      apiVersion: "v1",
      kind: "Service",
      metadata: metadata(app, nameOf(app)),
      spec: {
        selector: selectorLabels(app),
        ports: [{ name: PORT_NAME, port: app.spec.port, targetPort: app.spec.port, protocol: "TCP" }],
      },
    },
    sync: syncService,
  };
}

/** Restores the selector and ports; clusterIP, nodePorts and the rest stay as the server set them. */
function syncService(live: V1Service, desired: V1Service): boolean {
  let changed = syncLabels((live.metadata ??= {}), desired.metadata?.labels ?? {});
  const spec = (live.spec ??= {});
  const selector = desired.spec?.selector ?? {};
  if (!sameMap(spec.selector ?? {}, selector)) {
    spec.selector = { ...selector };
    changed = true;
  }
  const ports = desired.spec?.ports ?? [];
  const portsEqual = sameList(
    spec.ports ?? [],
    ports,
    (a: V1ServicePort, b: V1ServicePort) =>
      a.name === b.name &&
      a.port === b.port &&
      a.targetPort === b.targetPort &&
      (a.protocol ?? "TCP") === (b.protocol ?? "TCP"),
  );
  if (!portsEqual) {
    spec.ports = structuredClone(ports);
    changed = true;
  }
  return changed;
}

/**
 * The registration ConfigMap stands for an external registration holding the
 * spec's values. Its name carries the WebApp's UID, so a WebApp deleted and
 * recreated under the same name never takes over its previous life's.
 */
export function registrationChild(app: WebApp): Child<V1ConfigMap> {
  return {
    kind: "ConfigMap",
    owned: true,
    desired: {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: metadata(app, `registration-${app.metadata?.uid ?? ""}`),
      data: {
        owner: nameOf(app),
        image: app.spec.image,
        replicas: String(replicasOf(app)),
        port: String(app.spec.port),
        args: (app.spec.args ?? []).join("\n"),
      },
    },
    sync: syncRegistration,
  };
}

function syncRegistration(live: V1ConfigMap, desired: V1ConfigMap): boolean {
  let changed = syncLabels((live.metadata ??= {}), desired.metadata?.labels ?? {});
  const data = desired.data ?? {};
  if (!sameMap(live.data ?? {}, data)) {
    live.data = { ...data };
    changed = true;
  }
  return changed;
}

/** Sets our labels to our values and keeps everybody else's. */
function syncLabels(meta: V1ObjectMeta, ours: Record<string, string>): boolean {
  let changed = false;
  for (const [key, value] of Object.entries(ours)) {
    if (meta.labels?.[key] !== value) {
      (meta.labels ??= {})[key] = value;
      changed = true;
    }
  }
  return changed;
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  return sameList(a, b, (x, y) => x === y);
}

function sameList<T>(a: readonly T[], b: readonly T[], same: (x: T, y: T) => boolean): boolean {
  return a.length === b.length && a.every((x, i) => same(x, b[i] as T));
}

function sameMap(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}
