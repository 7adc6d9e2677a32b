import type { KubeObject } from "../kube/kube-client.js";
import type { WriteEntry } from "../proxy/write-log.js";
import { liveChildObjects, type LiveChild } from "./reference-state.js";
import { Limiter } from "../util/limiter.js";
import { Scenario, type ScenarioDeps, type SpecWrite } from "./scenario.js";

/** A child as a spec's reference has it: its record and the whole live object. */
export type ReferenceChild = LiveChild;

/**
 * The converged state of one spec, to compare scenarios that end on that
 * spec with: spec 0 is the sample as written, spec k the sample with the
 * contract's first k updates applied one after another, each converged.
 * Scenarios live in namespaces of their own, so compare children by kind and
 * normalised name (`normalisedName`: the custom resource's UID reads <uid>).
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
}

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

  /** The number of specs: the sample and one per update. */
  get count(): number {
    return this.deps.contract.updates.length + 1;
  }

  /** The kinds of the children in every reference computed so far (for the contract's promises' sake). */
  async childKinds(): Promise<Set<string>> {
    const settled = await Promise.allSettled(this.computed.values());
    return new Set(
      settled.flatMap((r) => (r.status === "fulfilled" ? r.value.children.map((c) => c.ref.kind) : [])),
    );
  }

  /** The reference of `spec`; `progress` hears about the computation when this call starts it. */
  forSpec(spec: number, progress: (line: string) => void = () => undefined): Promise<SpecReference> {
    if (!Number.isInteger(spec) || spec < 0 || spec >= this.count) {
      throw new RangeError(`spec ${spec}: the contract has specs 0..${this.count - 1}`);
    }
    let reference = this.computed.get(spec);
    if (!reference) {
      reference = this.slots.run(() => this.compute(spec, progress));
      this.computed.set(spec, reference);
    }
    return reference;
  }

  private async compute(spec: number, progress: (line: string) => void): Promise<SpecReference> {
    progress(
      spec === 0
        ? "reference state: converging the sample"
        : `reference state of spec ${spec}: converging the sample, then ${spec} update(s)`,
    );
    const scenario = await Scenario.open(`reference-${spec}`, this.deps);
    try {
      await scenario.startWithSample();
      let customResource = await scenario.converge("convergence of the sample");
      for (const [index, update] of this.deps.contract.updates.slice(0, spec).entries()) {
        await scenario.applyUpdate(update, index + 1);
        customResource = await scenario.converge(`convergence of update ${index + 1}`);
      }
      const children = await liveChildObjects(scenario);
      return {
        spec,
        namespace: scenario.namespace,
        customResource,
        children,
        writes: scenario.proxy.writeLog.query({ actor: "operator" }),
        specWrites: [...scenario.specWrites],
      };
    } finally {
      await scenario.close();
    }
  }
}
