import {
  type KubeConfig,
  type KubernetesObject,
  makeInformer,
  type ObjectCache,
} from "@kubernetes/client-node";
import type { Bug } from "./bugs.ts";
import { controllerOf, GROUP, namespaceOf, nameOf } from "./children.ts";
import { describeError, makeApis, type KindApi } from "./kube.ts";
import type { Log } from "./log.ts";
import { Reconciler } from "./reconciler.ts";
import { WorkQueue } from "./workqueue.ts";

/** A watch that failed is started again after this long (it resumes from its last resourceVersion). */
const INFORMER_RESTART_MS = 500;

/**
 * The controller: an informer per kind (WebApps and the three kinds of
 * children), a work queue of WebApp keys fed by their events (a child's event
 * queues its controlling WebApp), and one worker that reconciles key after
 * key once every informer has listed. `stop` ends it gracefully.
 */
export class Operator {
  readonly #config: KubeConfig;
  readonly #namespace: string;
  readonly #bug: Bug;
  readonly #log: Log;
  readonly #queue = new WorkQueue();
  /** Stops each informer's watch. */
  readonly #stopInformers: (() => Promise<void>)[] = [];
  readonly #restarts = new Set<ReturnType<typeof setTimeout>>();
  #stopped = false;
  #resolveStopped: () => void = () => undefined;
  readonly #stoppedPromise = new Promise<void>((resolve) => {
    this.#resolveStopped = resolve;
  });

  constructor(options: { config: KubeConfig; namespace: string; bug: Bug; log: Log }) {
    this.#config = options.config;
    this.#namespace = options.namespace;
    this.#bug = options.bug;
    this.#log = options.log;
  }

  /** Runs until `stop`: resolves once the worker has finished its last reconcile and the watches are closed. */
  async run(): Promise<void> {
    const apis = makeApis(this.#config, this.#log);
    const queueApp = (app: KubernetesObject) => this.#queue.add(`${namespaceOf(app)}/${nameOf(app)}`);
    const queueOwner = (child: KubernetesObject) => {
      const owner = controllerOf(child);
      if (owner?.kind === "WebApp" && owner.apiVersion.startsWith(`${GROUP}/`)) {
        this.#queue.add(`${namespaceOf(child)}/${owner.name}`);
      }
    };
    const webApps = this.#inform(apis.webApps, queueApp);
    const deployments = this.#inform(apis.deployments, queueOwner);
    const services = this.#inform(apis.services, queueOwner);
    const configMaps = this.#inform(apis.configMaps, queueOwner);
    await Promise.race([
      Promise.all([webApps.synced, deployments.synced, services.synced, configMaps.synced]),
      this.#stoppedPromise,
    ]);
    if (this.#stopped) return this.#close();
    this.#log.info(`caches synced; reconciling WebApps in ${this.#namespace || "every namespace"}`);
    const reconciler = new Reconciler({
      apis,
      caches: {
        webApps: webApps.cache,
        deployments: deployments.cache,
        services: services.cache,
        configMaps: configMaps.cache,
      },
      bug: this.#bug,
      log: this.#log,
    });
    await this.#work(reconciler);
    await this.#close();
  }

  /** Stops handing out work; the reconcile under way finishes, then run() resolves. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#queue.shutDown();
    this.#resolveStopped();
  }

  async #work(reconciler: Reconciler): Promise<void> {
    for (let key = await this.#queue.get(); key !== undefined; key = await this.#queue.get()) {
      try {
        await reconciler.reconcile(key);
        this.#queue.forget(key);
      } catch (error) {
        const delay = this.#queue.backoffMs(this.#queue.numRequeues(key));
        this.#log.error(`reconcile ${key}: ${describeError(error)}; again in ${delay} ms`);
        this.#queue.addRateLimited(key);
      } finally {
        this.#queue.done(key);
      }
    }
  }

  /**
   * An informer on one kind in the watched namespace, calling `onEvent` for
   * every add, update and delete. `synced` resolves once its first list is in
   * the cache. A watch or list that fails is started again after a pause.
   */
  #inform<T extends KubernetesObject>(
    api: Pick<KindApi<T>, "kind" | "listPath" | "list">,
    onEvent: (object: T) => void,
  ): { cache: ObjectCache<T>; synced: Promise<void> } {
    let listed: () => void = () => undefined;
    const synced = new Promise<void>((resolve) => {
      listed = resolve;
    });
    const informer = makeInformer<T>(this.#config, api.listPath(this.#namespace), async () => {
      const list = await api.list(this.#namespace);
      // The informer stores the items right after this returns: resolve after that.
      setImmediate(listed);
      return list;
    });
    informer.on("add", onEvent);
    informer.on("update", onEvent);
    informer.on("delete", onEvent);
    const start = () => {
      informer.start().catch(restart);
    };
    const restart = (error: unknown) => {
      if (this.#stopped) return;
      this.#log.error(
        `${api.kind} informer: ${describeError(error)}; restarting in ${INFORMER_RESTART_MS} ms`,
      );
      const timer = setTimeout(() => {
        this.#restarts.delete(timer);
        if (!this.#stopped) start();
      }, INFORMER_RESTART_MS);
      this.#restarts.add(timer);
    };
    informer.on("error", restart);
    this.#stopInformers.push(() => informer.stop());
    start();
    return { cache: informer, synced };
  }

  async #close(): Promise<void> {
    for (const timer of this.#restarts) clearTimeout(timer);
    this.#restarts.clear();
    await Promise.all(this.#stopInformers.map((stop) => stop()));
  }
}
