import { isDeepStrictEqual } from "node:util";
import { describeClockWrite, withClockMarks } from "./clock-marks.js";
import { delayedRequeuePending } from "./clock-queues.js";
import { operatorFinalizers, recordDeletion, type DeletionRecord } from "./deletion.js";
import { lifeTo, updateCount, updateName } from "../contract/spec-path.js";
import type { KubeObject } from "../kube/kube-client.js";
import type { WriteEntry } from "../proxy/write-log.js";
import { AbortedError, describeError } from "../errors.js";
import { learnRoles, type ChildRoles, type Life } from "./child-roles.js";
import { liveChildObjects, type LiveChild } from "./reference-state.js";
import { Limiter } from "../util/limiter.js";
import { Inconclusive } from "./inconclusive.js";
import { Scenario, type ScenarioDeps, type SpecWrite } from "./scenario.js";
import { isRecord } from "../util/records.js";

/** A child as a spec's reference has it: its record and the whole live object. */
export type ReferenceChild = LiveChild;

/**
 * The converged state of one spec, to compare scenarios that end on that
 * spec with: spec 0 is the sample as written, spec k the sample with the
 * contract's first k updates applied one after another, each converged.
 * Scenarios live in namespaces of their own, with custom resources of their
 * own UIDs, so children compare by role (child-roles.ts), learned from two
 * fault-free lives of the sample.
 */
export interface SpecReference {
  readonly spec: number;
  /** The namespace it was computed in (its writes name it). */
  readonly namespace: string;
  /** The custom resource as it was when converged (status included). */
  readonly customResource: KubeObject;
  readonly children: readonly ReferenceChild[];
  /**
   * Every operator write from the start, in order, with its effect: as the
   * write log has them (Events, Leases and the contract's ignored kinds
   * included), so positions in it are the positions fault ordinals count.
   */
  readonly writes: readonly WriteEntry[];
  /** The kit's writes that set specs 0..spec, in order: what the operator's writes between them answer. */
  readonly specWrites: readonly SpecWrite[];
  /**
   * Which child is which across lives, and which values each generates once
   * per life: learned from this spec-0 life and a second one. Every spec's
   * reference carries spec 0's (a child only a later spec makes keys by its
   * normalised name).
   */
  readonly roles?: ChildRoles;
  /**
   * Spec 0's first life only, for an operator that put a finalizer of its
   * own on the custom resource: the kit then deleted the converged custom
   * resource and recorded the operator's deletion writes (the deletion
   * suite's reference). Absent: no finalizer, or another spec.
   */
  readonly deletion?: DeletionRecord;
  /** The second life (spec 0 only): what varies with timing between two fault-free lives. */
  readonly secondLife?: { readonly namespace: string; readonly writes: readonly WriteEntry[] };
  /**
   * Set when, at convergence, the operator's last reconcile had asked for a
   * delayed requeue (its queues show it: clock-writes.ts): its clock has work
   * for it later, which this life, ending at convergence, did not wait for.
   */
  readonly delayedRequeue?: true;
  /**
   * A generated update's reference only: set when the operator did not
   * carry the update out (no convergence on it); the kit then wrote the
   * previous spec back and recorded where that led (the recovery oracle).
   * `children` and `customResource` are then the recovered state.
   */
  readonly notCarriedOut?: {
    /** Why the update counts as not carried out: the convergence's verdict. */
    readonly why: string;
    /** Set when writing the previous spec back did not converge either. */
    readonly notRecovered?: string;
  };
}

/** A life as compute() gives it: a reference before the roles are learned. */
type OneLife = Omit<SpecReference, "roles" | "secondLife">;

/**
 * The run's reference states, one per spec, each computed once (in a
 * scenario of its own) the first time a check asks for it and then shared by
 * every scenario that needs it. A reference that could not be computed
 * (an operator that did not converge: Inconclusive) fails every asker the
 * same way; it is not retried.
 */
export class SpecReferences {
  private readonly computed = new Map<number, Promise<SpecReference>>();

  /**
   * `slots`: the run's scenario limiter. A reference is a scenario like any
   * other and takes a slot: with one slot (an operator that watches the whole
   * cluster) it must never run beside another scenario. So a task that holds
   * a slot must never ask for a reference that is not computed yet.
   */
  constructor(
    private readonly deps: ScenarioDeps,
    private readonly slots: Limiter = new Limiter(1),
  ) {}

  /**
   * The references of a contract with generated updates (spec-exploration.ts):
   * what is computed or under way is shared, since the sample and the
   * contract's own updates are the same; the new specs are computed here.
   */
  withGeneratedUpdates(contract: ScenarioDeps["contract"]): SpecReferences {
    const next = new SpecReferences({ ...this.deps, contract }, this.slots);
    for (const [spec, reference] of this.computed) next.computed.set(spec, reference);
    return next;
  }

  /**
   * The generated updates whose reference shows no change against the
   * reference it started from (the contract's last update's): the same
   * children, field for field where the operator manages them, and the
   * same status but for its generations. Only references already computed
   * are compared. For the report: a field with no visible effect.
   */
  async withoutEffect(compare: (here: SpecReference, base: SpecReference) => boolean): Promise<string[]> {
    const { contract } = this.deps;
    const generated = contract.generatedUpdates ?? [];
    const baseSpec = contract.updates.length;
    const settled = async (spec: number) => {
      const computed = this.computed.get(spec);
      return computed ? computed.catch(() => undefined) : undefined;
    };
    const base = await settled(baseSpec);
    if (!base) return [];
    const without: string[] = [];
    for (const [index, update] of generated.entries()) {
      const here = await settled(baseSpec + index + 1);
      // An update not carried out shows the recovered state: nothing to say of its field.
      if (here && !here.notCarriedOut && compare(here, base)) without.push(update.description);
    }
    return without;
  }

  /** The number of specs: the sample and one per update (the generated ones included). */
  get count(): number {
    return updateCount(this.deps.contract) + 1;
  }

  /** The kinds of the children in every reference computed so far (for the contract's promises' sake). */
  async childKinds(): Promise<Set<string>> {
    const settled = await Promise.allSettled(this.computed.values());
    return new Set(
      settled.flatMap((r) => (r.status === "fulfilled" ? r.value.children.map((c) => c.ref.kind) : [])),
    );
  }

  /**
   * What a reader must know before the verdicts, from the references computed
   * so far: that the operator acts on a clock (a fault-free life made writes
   * no stimulus of the kit's explains), and that no reference has a child,
   * so no check judged one (with why, when its clock may make them).
   */
  async notices(): Promise<string[]> {
    const settled = await Promise.allSettled(this.computed.values());
    const references = settled.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    if (references.length === 0) return [];
    const notices: string[] = [];
    const lives = references.flatMap((r) => [r.writes, r.secondLife?.writes ?? []]);
    const ticks = lives.flatMap((writes) => writes.filter((w) => w.clock !== undefined));
    const [first] = ticks;
    if (first) {
      notices.push(
        `the operator acts on a clock of its own: ${ticks.length} write(s) of its fault-free reference lives answered nothing the kit did (first: ${describeClockWrite(first)}). A child its clock made is left out of a comparison with a life that has none of its role, with a note; set clock.horizon in the contract to wait for what is due`,
      );
    }
    if (references.every((r) => r.children.length === 0)) {
      const delayed = references.some((r) => r.delayedRequeue);
      notices.push(
        `no check judged any child: the operator created none on its way to any reference state, so every check that needs one was skipped${delayed ? "; it had a delayed requeue pending when it converged, so its children may come from its clock: set clock.horizon in the contract to wait for them" : ""}`,
      );
    }
    return notices;
  }

  /** The reference of `spec`; `progress` hears about the computation when this call starts it. */
  forSpec(spec: number, progress: (line: string) => void = () => undefined): Promise<SpecReference> {
    if (!Number.isInteger(spec) || spec < 0 || spec >= this.count) {
      throw new RangeError(`spec ${spec}: the contract has specs 0..${this.count - 1}`);
    }
    let reference = this.computed.get(spec);
    if (!reference) {
      reference = spec === 0 ? this.twoLives(progress) : this.later(spec, progress);
      this.computed.set(spec, reference);
    }
    return reference;
  }

  /**
   * Spec 0 in two lives, side by side when the slots allow: what varies
   * between two fault-free lives (names, generated values, how often the
   * operator writes the same thing) varies with the life, not with a fault.
   */
  private async twoLives(progress: (line: string) => void): Promise<SpecReference> {
    const secondLife = (name: string) =>
      this.slots
        .run(() => this.compute(0, () => undefined, name))
        .then(
          (other) => ({ other }),
          (error: unknown) => ({ error }),
        );
    const [first, firstTry] = await Promise.all([
      this.slots.run(() => this.compute(0, progress, "reference-0")),
      secondLife("reference-0-second-life"),
    ]);
    let second = firstTry;
    // The second life only teaches, but without it nothing varying with the life can be learned and
    // many verdicts become inconclusive: one failure (a connection reset, a slow start) gets one more try.
    if ("error" in second && !(second.error instanceof AbortedError)) {
      progress(
        `reference state: the second reference life did not converge (${describeError(second.error)}); trying it once more`,
      );
      second = await secondLife("reference-0-third-life");
    }
    // When it still cannot converge, the first is the reference alone.
    if ("error" in second) {
      const why = `the second reference life did not converge (${describeError(second.error)})`;
      progress(
        `reference state: ${why}; children compare by their names alone, and no value counts as generated per life`,
      );
      return {
        ...first,
        roles: this.withClockPending({ ...learnRoles(life(first), life(first)), oneLife: why }, first),
      };
    }
    return {
      ...first,
      roles: this.withClockPending(learnRoles(life(first), life(second.other)), first),
      secondLife: { namespace: second.other.namespace, writes: second.other.writes },
    };
  }

  /**
   * The roles, saying whether this spec's own reference ended with a delayed
   * requeue pending (ChildRoles.clockPending): only without a clock horizon,
   * since within one every life waits for the ticks and compares them.
   */
  private withClockPending(roles: ChildRoles, reference: Pick<SpecReference, "delayedRequeue">): ChildRoles {
    const { clockPending: _spec0, ...rest } = roles;
    const pending = reference.delayedRequeue && this.deps.contract.clock.horizonMs === undefined;
    return pending ? { ...rest, clockPending: true } : rest;
  }

  /** A later spec: its own life, with spec 0's roles (asked for outside the slot: it may not be computed yet). */
  private async later(spec: number, progress: (line: string) => void): Promise<SpecReference> {
    const [zero, reference] = await Promise.all([
      this.forSpec(0, progress),
      this.slots.run(() => this.compute(spec, progress)),
    ]);
    return { ...reference, ...(zero.roles ? { roles: this.withClockPending(zero.roles, reference) } : {}) };
  }

  private async compute(
    spec: number,
    progress: (line: string) => void,
    name = `reference-${spec}`,
  ): Promise<OneLife> {
    progress(
      spec === 0
        ? "reference state: converging the sample (in two lives)"
        : spec > this.deps.contract.updates.length
          ? `reference state of spec ${spec}: converging the sample${this.deps.contract.updates.length === 0 ? "" : ` born with the spec of update ${this.deps.contract.updates.length}`}, then ${updateName(this.deps.contract, spec)}`
          : `reference state of spec ${spec}: converging the sample, then ${spec} update(s)`,
    );
    const scenario = await Scenario.open(name, this.deps);
    try {
      // A generated update's reference starts where the update does, born with the spec of the
      // contract's last update: the comparison is about its one change, and it saves the way there.
      const { contract } = this.deps;
      const generated = spec > contract.updates.length;
      const { bornAt, steps } = lifeTo(contract, spec);
      await scenario.startWithSample(bornAt);
      let customResource = await scenario.converge(
        bornAt === 0
          ? "convergence of the sample"
          : `convergence of the sample born with ${updateName(contract, bornAt)}'s spec`,
      );
      let notCarriedOut: SpecReference["notCarriedOut"];
      for (const step of steps) {
        // The references write each update first: the checks' lives then write what passed there.
        const before = customResource;
        await scenario.applyUpdate(step.patch, step.spec, { dryRunFirst: true });
        try {
          customResource = await scenario.converge(`convergence of ${updateName(contract, step.spec)}`);
        } catch (error) {
          // A generated update the operator does not carry out is no failure of the reference: the
          // update came from the kit, not the user. What is judged is whether it recovers.
          if (!generated || !(error instanceof Inconclusive)) throw error;
          const recovery = await writtenBack(scenario, before, bornAt);
          customResource = recovery.customResource;
          notCarriedOut = {
            why: error.message,
            ...(recovery.notRecovered ? { notRecovered: recovery.notRecovered } : {}),
          };
        }
      }
      const delayedRequeue = delayedRequeuePending(scenario.operator.queueReadings ?? []);
      const children = await liveChildObjects(scenario);
      const writes = withClockMarks(
        scenario.proxy.writeLog.query({ actor: "operator" }),
        scenario.clockMarks(),
      );
      // The deletion is recorded after the reference's writes are taken: they end at convergence.
      const finalizers = operatorFinalizers(customResource, this.deps.contract.sample.object);
      const deletion =
        name === "reference-0" && finalizers.length > 0
          ? await recordDeletion(scenario, finalizers, this.deps)
          : undefined;
      return {
        spec,
        namespace: scenario.namespace,
        customResource,
        children,
        writes,
        specWrites: [...scenario.specWrites],
        ...(deletion ? { deletion } : {}),
        ...(delayedRequeue ? { delayedRequeue } : {}),
        ...(notCarriedOut ? { notCarriedOut } : {}),
      };
    } finally {
      await scenario.close();
    }
  }
}

/**
 * Writes the spec the custom resource had before a generated update back
 * (a merge patch from its spec now to `before`'s) and converges: where the
 * operator comes back to is what the recovery oracle compares with the
 * previous spec's reference. A convergence that fails again is recorded,
 * with the custom resource as it is.
 */
async function writtenBack(
  scenario: Scenario,
  before: KubeObject,
  previousSpec: number,
): Promise<{ readonly customResource: KubeObject; readonly notRecovered?: string }> {
  const now = await scenario.kit.get(scenario.customResource);
  await scenario.applyUpdate({ spec: mergePatchBetween(now.spec, before.spec) }, previousSpec);
  try {
    return { customResource: await scenario.converge("convergence of the previous spec, written back") };
  } catch (error) {
    if (!(error instanceof Inconclusive)) throw error;
    return { customResource: await scenario.kit.get(scenario.customResource), notRecovered: error.message };
  }
}

/** The JSON merge patch that turns `from` into `to` (RFC 7386): removed keys are null, lists whole. Pure. */
export function mergePatchBetween(from: unknown, to: unknown): unknown {
  if (!isRecord(from) || !isRecord(to)) return to === undefined ? null : to;
  const patch: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(from), ...Object.keys(to)])) {
    if (!(key in to)) patch[key] = null;
    else if (!isDeepStrictEqual(from[key], to[key])) patch[key] = mergePatchBetween(from[key], to[key]);
  }
  return patch;
}

/** A reference's life as child-roles.ts learns from it. */
function life(reference: OneLife): Life {
  return {
    namespace: reference.namespace,
    children: reference.children.map((c) => ({
      kind: c.ref.kind,
      group: c.group,
      resource: c.resource,
      name: c.ref.name,
      object: c.object,
    })),
    writes: reference.writes,
  };
}
