import type {
  KubernetesObject,
  ObjectCache,
  V1ConfigMap,
  V1Deployment,
  V1Service,
} from "@kubernetes/client-node";
import type { Bug } from "./bugs.ts";
import {
  type Child,
  type Condition,
  controllerOf,
  controllerReference,
  deploymentChild,
  nameOf,
  namespaceOf,
  registrationChild,
  serviceChild,
  type WebApp,
  type WebAppStatus,
} from "./children.ts";
import { isAlreadyExists, isConflict, isNotFound, type Apis, type KindApi } from "./kube.ts";
import type { Log } from "./log.ts";

/** What the informers hold: every read of a reconcile comes from here, except after a 409. */
export interface Caches {
  readonly webApps: ObjectCache<WebApp>;
  readonly deployments: ObjectCache<V1Deployment>;
  readonly services: ObjectCache<V1Service>;
  readonly configMaps: ObjectCache<V1ConfigMap>;
}

/** How often a write refused with 409 Conflict is tried again on a fresh read, in one reconcile. */
const WRITE_ATTEMPTS = 5;

/** A child with our name controlled by another owner: reported in status, left alone. */
class ChildConflictError extends Error {}

/** What the children look like after this reconcile's writes. */
interface Observation {
  deployment?: V1Deployment;
  conflicts: string[];
}

/**
 * Drives one WebApp toward its spec: a Deployment, a Service and a
 * registration ConfigMap, each created when missing and updated only when a
 * field this operator owns differs; then a status written only when it
 * differs from the stored one.
 */
export class Reconciler {
  readonly #apis: Apis;
  readonly #caches: Caches;
  readonly #bug: Bug;
  readonly #log: Log;

  constructor(options: { apis: Apis; caches: Caches; bug: Bug; log: Log }) {
    this.#apis = options.apis;
    this.#caches = options.caches;
    this.#bug = options.bug;
    this.#log = options.log;
  }

  /** Reconciles the WebApp "namespace/name"; a rejection means: try again later. */
  async reconcile(key: string): Promise<void> {
    const [namespace = "", name = ""] = key.split("/");
    const app = this.#caches.webApps.get(name, namespace);
    if (!app || app.metadata?.deletionTimestamp) return; // its children go with it (garbage collection)

    const observed: Observation = { conflicts: [] };
    // A child controlled by someone else is noted for the status and does not stop the others.
    const noteConflict = (error: unknown): undefined => {
      if (!(error instanceof ChildConflictError)) throw error;
      observed.conflicts.push(error.message);
      return undefined;
    };
    const apis = this.#apis;
    const caches = this.#caches;
    observed.deployment = await this.#ensureChild(
      app,
      deploymentChild(app, this.#bug),
      apis.deployments,
      caches.deployments,
    ).catch(noteConflict);
    await this.#ensureChild(app, serviceChild(app), apis.services, caches.services).catch(noteConflict);
    await this.#ensureChild(app, registrationChild(app), apis.configMaps, caches.configMaps).catch(
      noteConflict,
    );
    await this.#reconcileStatus(app, observed);
  }

  /**
   * Creates the child when it is missing, checks whose an existing one is,
   * and updates it only when a managed field differs. Returns it as it now is.
   */
  async #ensureChild<T extends KubernetesObject>(
    app: WebApp,
    child: Child<T>,
    api: KindApi<T>,
    cache: ObjectCache<T>,
  ): Promise<T> {
    const namespace = namespaceOf(app);
    const name = nameOf(child.desired);
    if (this.#bug === "ignore-already-exists" && child.kind === "Service") {
      // The mistake: create, and take "already exists" for "is as I want it".
      try {
        return await api.create(namespace, child.desired);
      } catch (error) {
        if (isAlreadyExists(error)) return child.desired;
        throw error;
      }
    }

    let live = cache.get(name, namespace);
    if (!live) {
      try {
        return await api.create(namespace, child.desired);
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        // The informer has not shown it yet (our own create moments ago, a cache
        // behind the server) or someone else made it. The API server knows: read
        // it there and go on as with any existing child. Never delete it.
        live = await api.read(namespace, name);
      }
    }
    this.#checkIdentity(app, child, live);
    return this.#updateChild(app, child, api, live);
  }

  /**
   * Writes the managed fields onto a copy of the live child, when any differs.
   * The update carries the live resourceVersion; on 409 Conflict it reads the
   * child again from the API server (the cache may still be behind), checks
   * whose it is and recomputes, so another writer's change is built upon.
   */
  async #updateChild<T extends KubernetesObject>(
    app: WebApp,
    child: Child<T>,
    api: KindApi<T>,
    live: T,
  ): Promise<T> {
    const namespace = namespaceOf(app);
    const name = nameOf(child.desired);
    let current = live;
    for (let attempt = 1; ; attempt++) {
      const target = structuredClone(current);
      let changed = child.sync(target, child.desired);
      if (child.owned && !controllerOf(target)) {
        // An unowned child of our name: adopt it (and fix it).
        const metadata = (target.metadata ??= {});
        metadata.ownerReferences = [...(metadata.ownerReferences ?? []), controllerReference(app)];
        changed = true;
      }
      if (!changed) return current; // nothing we own differs: no write at all
      try {
        return await api.replace(namespace, name, target);
      } catch (error) {
        if (!isConflict(error) || attempt >= WRITE_ATTEMPTS) throw error;
        current = await api.read(namespace, name);
        this.#checkIdentity(app, child, current);
      }
    }
  }

  #checkIdentity<T extends KubernetesObject>(app: WebApp, child: Child<T>, live: T): void {
    const owner = controllerOf(live);
    if (child.owned && owner && owner.uid !== app.metadata?.uid) {
      throw new ChildConflictError(
        `${child.kind} ${nameOf(live)} is controlled by ${owner.kind} ${owner.name} (uid ${owner.uid}), not by this WebApp`,
      );
    }
  }

  /**
   * Writes the status derived from this reconcile's observation, only when it
   * differs from the stored one. A 409 is retried on a fresh read; if the
   * generation moved meanwhile, these conclusions are about an old spec and
   * nothing is written: the reconcile the spec change queued reports instead.
   */
  async #reconcileStatus(app: WebApp, observed: Observation): Promise<void> {
    const namespace = namespaceOf(app);
    const name = nameOf(app);
    let target = app;
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1) {
        try {
          target = await this.#apis.webApps.read(namespace, name);
        } catch (error) {
          if (isNotFound(error)) return;
          throw error;
        }
        if (target.metadata?.generation !== app.metadata?.generation) {
          this.#log.info(
            `WebApp ${namespace}/${name}: spec changed during the status update (generation ${app.metadata?.generation} → ${target.metadata?.generation}); the next reconcile reports`,
          );
          return;
        }
      }
      const next = this.#desiredStatus(app, target.status, observed);
      if (sameJson(target.status ?? {}, next)) return;
      try {
        await this.#apis.webApps.replaceStatus(namespace, name, { ...target, status: next });
        return;
      } catch (error) {
        if (!isConflict(error) || attempt >= WRITE_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * The status this observation says, starting from `current` so that an
   * unchanged condition keeps its lastTransitionTime.
   */
  #desiredStatus(app: WebApp, current: WebAppStatus | undefined, observed: Observation): WebAppStatus {
    const generation = app.metadata?.generation ?? 0;
    const replicas = app.spec.replicas ?? 1;
    const next = structuredClone(current ?? {});
    next.observedGeneration = generation;
    const deployment = observed.deployment;
    let ready: Pick<Condition, "status" | "reason" | "message">;
    if (observed.conflicts.length > 0) {
      ready = { status: "False", reason: "ChildConflict", message: observed.conflicts.join("; ") };
    } else if (!deployment) {
      ready = { status: "False", reason: "Progressing", message: "waiting for the Deployment" };
    } else if (deploymentAvailable(deployment, replicas)) {
      const available = deployment.status?.availableReplicas ?? 0;
      ready = {
        status: "True",
        reason: "Available",
        message: `${available} of ${replicas} replicas available`,
      };
    } else {
      const available = deployment.status?.availableReplicas ?? 0;
      ready = {
        status: "False",
        reason: "Progressing",
        message: `${available} of ${replicas} replicas updated and available`,
      };
    }
    if (deployment) next.readyReplicas = deployment.status?.readyReplicas ?? 0;
    setCondition((next.conditions ??= []), {
      type: "Ready",
      ...ready,
      observedGeneration: generation,
      lastTransitionTime: this.#timestamp(),
    });
    return next;
  }

  /** Now, to the second, as Kubernetes writes times. */
  #timestamp(): string {
    return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace(".000Z", "Z");
  }
}

/** True when the Deployment controller has seen the current template and every replica is updated and available. */
function deploymentAvailable(deployment: V1Deployment, replicas: number): boolean {
  const status = deployment.status;
  return (
    (status?.observedGeneration ?? 0) === (deployment.metadata?.generation ?? -1) &&
    (status?.updatedReplicas ?? 0) === replicas &&
    (status?.availableReplicas ?? 0) === replicas &&
    (status?.replicas ?? 0) === replicas
  );
}

/**
 * Sets a condition as metav1's SetStatusCondition does: lastTransitionTime
 * moves only when the status changes; reason, message and observedGeneration
 * are always the new ones.
 */
export function setCondition(conditions: Condition[], condition: Condition): void {
  const existing = conditions.find((c) => c.type === condition.type);
  if (!existing) {
    conditions.push(condition);
    return;
  }
  if (existing.status !== condition.status) {
    existing.status = condition.status;
    existing.lastTransitionTime = condition.lastTransitionTime;
  }
  existing.reason = condition.reason;
  existing.message = condition.message;
  existing.observedGeneration = condition.observedGeneration;
}

/** Equal as JSON values, whatever the order of their keys. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  const left = Object.entries(a).filter(([, v]) => v !== undefined);
  const right = new Map(Object.entries(b).filter(([, v]) => v !== undefined));
  return left.length === right.size && left.every(([k, v]) => right.has(k) && sameJson(v, right.get(k)));
}
