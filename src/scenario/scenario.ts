import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Contract } from "../contract/load-contract.js";
import { createFixtures, type Fixture } from "./fixtures.js";
import { evaluateReadiness } from "../contract/readiness.js";
import { describeError } from "../errors.js";
import { isNotFound } from "../kube/api-errors.js";
import type { KubeClient, KubeObject, ObjectRef } from "../kube/kube-client.js";
import type { OperatorLauncher, OperatorUnderTest } from "../operator/operator-under-test.js";
import { ApiProxy } from "../proxy/api-proxy.js";
import type { WriteEntry } from "../proxy/write-log.js";
import { isoNow, type Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { logExcerpt } from "./log-excerpt.js";
import { silentFor, type Silence } from "./quiescence.js";
import { releaseLeftFinalizers } from "./left-finalizers.js";
import { createSampleWithSpec, writeUpdate } from "./spec-writes.js";
import { ClockMarker, type ClockMark } from "./clock-writes.js";
import { withClockMarks } from "./clock-marks.js";
import { pendingUpdate, ScenarioQuiescence } from "./operator-silence.js";
import { SCENARIO_LIFETIME, type Timings } from "./timings.js";
import { dyingWords, Inconclusive, NeverQuiet, OperatorExited } from "./inconclusive.js";
import { holds, notYet, untilQuiet } from "./quiet-wait.js";

// Suites catch and throw them as part of the scenario's API.
export { Inconclusive, NeverQuiet, OperatorExited } from "./inconclusive.js";

/** A panic in an operator's log: Go's own, or one its runtime recovered and logged ("Observed a panic"). */
const PANIC_LINE = /^panic: |Observed a panic|panic: .* \[recovered\]/;

/** What every scenario needs from the run. */
export interface ScenarioDeps {
  readonly contract: Contract;
  /** The kit's own direct client (the run's cluster credentials). */
  readonly kube: KubeClient;
  readonly upstream: { readonly kubeconfigPath: string; readonly context: string };
  readonly workDir: string;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  readonly clock: Clock;
  /** Leave namespaces in place (for --keep on failure). */
  readonly keep: () => boolean;
  /** Makes each scenario's operator, as the contract runs it (a local process, or a Deployment). */
  readonly operators: OperatorLauncher;
  /** Where the time goes, for the run benchmark. */
  readonly timings?: Timings;
  /** The contract's fixtures, resolved (fixtures.ts): the namespaced ones are made in every scenario's namespace. */
  readonly fixtures?: readonly Fixture[];
}

/** A kit write that set the custom resource's spec: the sample's create (spec 0) or update `spec`. */
export interface SpecWrite {
  readonly spec: number;
  /** Its sequence number in the scenario's write log. */
  readonly seq: number;
  /** metadata.generation in the API server's answer. */
  readonly generation?: number;
}

/**
 * One scenario's world: a fresh namespace, its own proxy (and so its own
 * write log), the operator started through it, and the kit's writer. Every
 * resource it creates registers its cleanup; `close` runs them in reverse.
 */
export class Scenario {
  private readonly cleanups: { readonly what: string; readonly run: () => Promise<void> }[] = [];
  private readonly spec: SpecWrite[] = [];
  /**
   * For each spec write (by its seq), the time it was noted, after its
   * answer: a read that arrived later (a read's `time` is its arrival) was
   * served after the write. Read sequence numbers are given at the answer,
   * so a read in flight during the write would pass a sequence test.
   */
  private readonly specWriteAnsweredAt = new Map<number, string>();

  private constructor(
    readonly name: string,
    readonly namespace: string,
    readonly proxy: ApiProxy,
    readonly operator: OperatorUnderTest,
    /** The kit's writes, through the proxy: logged as `actor: kit`. */
    readonly kit: KubeClient,
    /** Its folder: write log, read log, operator log, observation. */
    readonly workDir: string,
    private readonly deps: ScenarioDeps,
  ) {
    this.openedAt = deps.clock.now();
    this.quiescence = new ScenarioQuiescence({ proxy, operator, contract: deps.contract, clock: deps.clock });
  }

  /** The evidence that the operator is done, the rule, and which evidence decided each wait (operator-silence.ts). */
  readonly quiescence: ScenarioQuiescence;

  private readonly openedAt: number;

  static async open(name: string, deps: ScenarioDeps): Promise<Scenario> {
    const slug = name
      .replace(/[^a-z0-9-]/g, "-")
      .slice(0, 40)
      .replace(/-+$/, "");
    const namespace = `rc-${slug}-${randomBytes(3).toString("hex")}`;
    const workDir = join(deps.workDir, namespace);
    await mkdir(workDir, { recursive: true });
    const cleanups: Scenario["cleanups"] = [];
    try {
      await deps.kube.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
      cleanups.push({
        what: `namespace ${namespace}`,
        run: async () => {
          if (deps.keep()) return;
          await deps.kube
            .delete({ apiVersion: "v1", kind: "Namespace", name: namespace })
            .catch((error: unknown) => {
              if (!isNotFound(error)) throw error;
            });
          await releaseLeftFinalizers(deps.kube, deps.contract, namespace);
        },
      });
      // What the sample refers to, there before it (and before the operator), gone with the namespace.
      await createFixtures(
        deps.kube,
        (deps.fixtures ?? []).filter((f) => f.namespaced),
        namespace,
      );
      const proxy = await ApiProxy.start({
        upstream: deps.upstream,
        logDir: workDir,
        ...(deps.operators.proxyListenAddress ? { listenAddress: deps.operators.proxyListenAddress } : {}),
        quietNamespace: namespace,
        logger: deps.logger,
        clock: deps.clock,
      });
      cleanups.push({ what: "the proxy", run: () => proxy.close() });
      const operator = deps.operators.launch({ namespace, proxy, workDir, kube: deps.kube });
      proxy.setCrashHandler(() => operator.crash());
      cleanups.push({ what: "the operator", run: () => operator.stop() });
      const kit = proxy.kitClient();
      cleanups.push({ what: "the kit's client", run: () => Promise.resolve(kit.close()) });
      const scenario = new Scenario(name, namespace, proxy, operator, kit, workDir, deps);
      scenario.cleanups.push(...cleanups);
      return scenario;
    } catch (error) {
      for (const cleanup of cleanups.reverse()) await cleanup.run().catch(() => undefined);
      throw error;
    }
  }

  private measure<T>(phase: string, body: () => Promise<T>): Promise<T> {
    return this.deps.timings ? this.deps.timings.measure(phase, this.deps.clock, body) : body();
  }

  /** Registers a cleanup; they run last-in first-out in `close`. */
  defer(what: string, run: () => Promise<void>): void {
    this.cleanups.push({ what, run });
  }

  /** Runs every cleanup in reverse order; reports the ones that failed and goes on. */
  async close(): Promise<void> {
    await this.measure("scenario cleanup", () => this.runCleanups());
    // Not a phase: the whole life of the scenario, which the phases are parts of.
    this.deps.timings?.add(SCENARIO_LIFETIME, this.deps.clock.now() - this.openedAt);
  }

  private async runCleanups(): Promise<void> {
    for (const cleanup of this.cleanups.splice(0).reverse()) {
      await cleanup
        .run()
        .catch((error: unknown) =>
          this.deps.logger.warn(`cleanup of ${cleanup.what} (${this.namespace}): ${describeError(error)}`),
        );
    }
  }

  get contract(): Contract {
    return this.deps.contract;
  }

  /** The custom resource's reference in this scenario's namespace. */
  get customResource(): ObjectRef {
    const { sample, customResource } = this.deps.contract;
    return {
      apiVersion: customResource.group
        ? `${customResource.group}/${customResource.version}`
        : customResource.version,
      kind: customResource.kind,
      name: sample.object.metadata?.name ?? "",
      namespace: this.namespace,
    };
  }

  /**
   * Starts the operator and creates the sample custom resource (through the
   * kit's writer): as written, or born with spec `spec` (createSample).
   */
  async startWithSample(spec = 0): Promise<KubeObject> {
    await this.startOperator();
    return this.createSample(spec);
  }

  /** Starts the operator and waits until it has started (a scenario that must act before the sample exists). */
  async startOperator(): Promise<void> {
    await this.measure("operator start", () => this.operator.start(this.deps.signal));
  }

  /** Restarts the operator (after a crash, or a clean stop) and waits until it has started again. */
  async restartOperator(): Promise<void> {
    await this.measure("operator restart", () => this.operator.restart(this.deps.signal));
  }

  /**
   * Creates the sample custom resource in this namespace (through the kit's
   * writer). With `spec` k > 0 it is born with the spec the contract's first
   * k updates lead to (each a merge patch, applied to the sample in order),
   * as a user who wrote that spec from the start would create it. A refusal
   * of such a spec is Inconclusive, as its update's would be.
   */
  async createSample(spec = 0): Promise<KubeObject> {
    const created = await createSampleWithSpec(this.kit, this.deps.contract, this.namespace, spec);
    this.noteSpecWrite(spec, this.lastKitWriteSeq(), created.metadata?.generation);
    this.sampleCreatedAt = this.deps.clock.now();
    return created;
  }

  /**
   * When the kit's latest create of the custom resource was answered (the
   * run's clock): this life's start, a recreation's included; undefined before.
   */
  private sampleCreatedAt: number | undefined;

  /**
   * The earliest moment a wait's quiet may count from: `now`, or, with a
   * clock horizon (clock.horizon), that long after this life's create when
   * it lies ahead: what the operator's clock makes by then is in every life.
   */
  quietNotBefore(now: number): number {
    const { horizonMs } = this.deps.contract.clock;
    const created = this.sampleCreatedAt;
    return horizonMs === undefined || created === undefined ? now : Math.max(now, created + horizonMs);
  }

  /** The kit's writes that set the custom resource's spec, in order: the sample's create, then each update. */
  get specWrites(): readonly SpecWrite[] {
    return this.spec;
  }

  /** Notes a kit write (its sequence number, the generation it produced) that set spec `spec`. */
  noteSpecWrite(spec: number, seq: number, generation: number | undefined): void {
    this.spec.push({ spec, seq, ...(generation === undefined ? {} : { generation }) });
    this.specWriteAnsweredAt.set(seq, isoNow(this.deps.clock));
  }

  /** The sequence number of the kit's last write to the custom resource itself. */
  private lastKitWriteSeq(): number {
    const { group, resource } = this.deps.contract.customResource;
    const [entry] = this.proxy.writeLog
      .query({ actor: "kit", group, resource, subresource: "", namespace: this.namespace })
      .slice(-1);
    if (!entry) throw new Error("the kit's write of the custom resource is not in the write log");
    return entry.seq;
  }

  /**
   * Applies the contract's update number `ordinal` (1-based, as messages
   * name it) to the custom resource as a merge patch, through the kit's
   * writer (spec-writes.ts: a refusal is Inconclusive; `dryRunFirst`, the
   * API server's dry run before it).
   */
  async applyUpdate(
    update: Readonly<Record<string, unknown>>,
    ordinal: number,
    { dryRunFirst = false }: { readonly dryRunFirst?: boolean } = {},
  ): Promise<KubeObject> {
    const answer = await writeUpdate(this.kit, this.customResource, this.deps.contract, update, ordinal, {
      dryRunFirst,
    });
    this.noteSpecWrite(ordinal, this.lastKitWriteSeq(), answer.metadata?.generation);
    return answer;
  }

  /**
   * Waits until the custom resource is ready (the contract's predicate), no
   * operator write has been in flight or completed for the quiet period,
   * and, for `quiet` readiness, the operator has created something. The
   * quiet period also runs from the moment of the last stimulus: a restarted
   * operator or a touched object gets the whole period to react before the
   * scenario calls it quiet. Throws Inconclusive at the deadline.
   */
  async converge(what = "convergence"): Promise<KubeObject> {
    const { clock, timings } = this.deps;
    const started = clock.now();
    // When the custom resource was last seen turning ready: the time after it is the quiet period's.
    const phases = { readyAt: undefined as number | undefined };
    try {
      return await this.convergeUntimed(what, phases);
    } finally {
      const end = clock.now();
      const readyAt = phases.readyAt ?? end;
      timings?.add("convergence wait (until ready)", readyAt - started);
      if (phases.readyAt !== undefined)
        timings?.add("quiet period (ready, no operator write)", end - readyAt);
    }
  }

  private async convergeUntimed(what: string, phases: { readyAt: number | undefined }): Promise<KubeObject> {
    const { contract } = this.deps;
    const now = this.deps.clock.now();
    // With a clock horizon, no convergence counts before it: what the operator's clock makes by then
    // is in every life. The wait's stimulus is the horizon, so quiet is counted from it.
    const stimulusAt = this.quietNotBefore(now);
    const startSeq = this.proxy.writeLog.lastSeq;
    // The sequence number from which the custom resource has been ready without a break.
    let readySince: number | undefined;
    // After a spec update, a readiness that names no generation may be the answer from before
    // it: the operator must have had the update delivered, and be quiet since (updateSeenAt).
    const { group, resource } = contract.customResource;
    const lastSpecWrite = this.spec.at(-1);
    const update = pendingUpdate(
      this.proxy,
      { group, resource, namespace: this.namespace, name: this.customResource.name },
      lastSpecWrite,
      lastSpecWrite && this.specWriteAnsweredAt.get(lastSpecWrite.seq),
    );
    let updateSeenAt: number | undefined;
    const converged = await untilQuiet(this, {
      awaited: `${what} in ${this.namespace}`,
      stimulusAt,
      timeoutMs: contract.timeouts.convergeMs + (stimulusAt - now),
      signal: this.deps.signal,
      observe: async () => {
        await this.throwIfOperatorExited(what);
        const object = await this.deps.kube.get(this.customResource);
        const readiness = evaluateReadiness(contract.readiness, object);
        if (!readiness.ready) {
          readySince = undefined;
          phases.readyAt = undefined;
          return notYet(readiness.reason);
        }
        readySince ??= this.proxy.writeLog.lastSeq;
        phases.readyAt ??= this.deps.clock.now();
        if (contract.readiness.kind === "quiet" && this.operatorWrites({ effect: "created" }).length === 0) {
          return notYet("the operator has created nothing yet");
        }
        const unquiet = (silence: Silence) => {
          const queues = silence.queues ? ` (queues: ${silence.queues.reason})` : "";
          return `${readiness.reason}; last operator write ${silentFor(silence)} ms ago${queues}`;
        };
        if (update && !readiness.aboutGeneration) {
          if (updateSeenAt === undefined && !update.delivered()) {
            return notYet(
              `${readiness.reason}, but stated for no generation: no watch event or read of the operator has shown it update ${update.spec} (resourceVersion ${update.resourceVersion}) yet`,
            );
          }
          updateSeenAt ??= this.deps.clock.now();
          const rule = `ready for no stated generation: quiet since a watch event or read showed the operator update ${update.spec}`;
          return holds({ object, rule, readiness }, unquiet, Math.max(stimulusAt, updateSeenAt));
        }
        return holds({ object, rule: "ready and quiet", readiness }, unquiet);
      },
      atDeadline: async ({ timeoutMs, lastReason }) => {
        const message = `no ${what} within ${timeoutMs / 1000} s: ${lastReason}`;
        await this.throwIfOperatorPanicked(what);
        // Still writing at the deadline: the operator never fell quiet (whether it reported ready or not).
        const stillWriting = this.proxy.operatorIdleMs < contract.quietPeriodMs;
        const writes = this.operatorWrites({ after: readySince ?? startSeq });
        if (stillWriting && writes.length > 0) {
          throw new NeverQuiet(message, await this.operatorLogNotes(), writes, readySince !== undefined);
        }
        throw new Inconclusive(message, await this.operatorLogNotes());
      },
    });
    const { object, rule, readiness } = converged.value;
    this.convergedBy.push(`${what}: ${rule}, by ${converged.by} (${readiness.reason})`);
    return object;
  }

  /** Throws OperatorExited when the operator's process ended on its own: nothing will converge now. */
  private async throwIfOperatorExited(what: string): Promise<void> {
    const exit = this.operator.exitedOnItsOwn?.();
    if (!exit) return;
    const log = await this.operator.logTail(20);
    const how = exit.signal !== null ? `signal ${exit.signal}` : `exit code ${String(exit.code)}`;
    const words = dyingWords(log);
    throw new OperatorExited(
      `the operator's process ended on its own (${how}) during ${what}${words ? `: ${words}` : ""}`,
      log,
    );
  }

  /**
   * Throws OperatorExited when the operator's log shows a panic its runtime
   * recovered (controller-runtime recovers a reconciler's panic, logs it and
   * retries): at a convergence's deadline, that panic is why it never came.
   */
  private async throwIfOperatorPanicked(what: string): Promise<void> {
    const log = await this.operator.logTail(400);
    const panic = log.find((line) => PANIC_LINE.test(line));
    if (panic === undefined) return;
    throw new OperatorExited(
      `the operator panicked during ${what} (its runtime recovered the panic) and never converged: ${panic}`,
      log.slice(Math.max(0, log.indexOf(panic) - 2)).slice(0, 20),
    );
  }

  /** How each convergence of this scenario was decided, in order: "convergence of update 1: ready and quiet (Ready=True for generation 2)". */
  readonly convergedBy: string[] = [];

  /**
   * The resourceVersions the custom resource had before write `seq` changed
   * it: before and after each successful write of it (any writer, status
   * included) up to `seq`, and what it had just before `seq` itself. Only the
   * kit and the operator write it through the proxy until it is deleted.
   */
  customResourceVersionsBefore(seq: number): string[] {
    const { group, resource } = this.deps.contract.customResource;
    const versions = new Set<string>();
    const writes = this.proxy.writeLog.query({
      group,
      resource,
      namespace: this.namespace,
      name: this.customResource.name,
      succeeded: true,
    });
    for (const w of writes) {
      if (w.seq > seq) break;
      if (w.priorResourceVersion) versions.add(w.priorResourceVersion);
      if (w.seq < seq && w.resourceVersion) versions.add(w.resourceVersion);
    }
    return [...versions];
  }

  /**
   * The operator's writes in this scenario's namespace (or cluster-wide), ignored kinds left out;
   * each its clock made carries its mark (clockMarks).
   */
  operatorWrites(query: { after?: number; effect?: WriteEntry["effect"] } = {}): WriteEntry[] {
    const ignored = this.deps.contract.ignoreWrites;
    const writes = this.proxy.writeLog
      .query({
        actor: "operator",
        withoutTags: true,
        ...(query.after === undefined ? {} : { after: query.after }),
        ...(query.effect ? { effect: query.effect } : {}),
      })
      .filter((e) => e.namespace === undefined || e.namespace === this.namespace)
      .filter((e) => !ignored.some((i) => i.group === e.group && i.resource === e.resource));
    return withClockMarks(writes, this.clockMarks());
  }

  private readonly clock = new ClockMarker(() => ({
    writes: this.proxy.writeLog.query({}),
    deliveries: this.proxy.readLog.delivered,
    readings: this.operator.queueReadings,
    quietPeriodMs: this.deps.contract.quietPeriodMs,
    sampleCreatedAt: this.sampleCreatedAt,
    horizonMs: this.deps.contract.clock.horizonMs,
  }));

  /**
   * The operator writes its own clock made (a schedule's tick, a heartbeat,
   * a resync), by seq, as far as the write log, the watch deliveries and the
   * queues tell (clock-writes.ts).
   */
  clockMarks(): ReadonlyMap<number, ClockMark> {
    return this.clock.marks(this.proxy.writeLog.lastSeq);
  }

  /**
   * The last `lines` distinct lines of the operator's log, as evidence:
   * repeats once with their count, lines about other scenarios' namespaces
   * left out (log-excerpt.ts). Read from a longer tail, so that an error
   * repeated on every retry does not crowd out the rest.
   */
  async operatorLog(lines = 10): Promise<string[]> {
    const excerpt = logExcerpt(await this.operator.logTail(lines * 20), this.namespace, lines);
    return excerpt.foreign > 0
      ? [...excerpt.lines, `(${excerpt.foreign} line(s) about other scenarios' namespaces left out)`]
      : [...excerpt.lines];
  }

  /** The operator's log excerpt as notes. */
  async operatorLogNotes(lines = 15): Promise<string[]> {
    return (await this.operatorLog(lines)).map((line) => `operator: ${line}`);
  }
}
