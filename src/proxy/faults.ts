import type { RequestInfo, Verb } from "./request-classifier.js";

/** Which write a fault acts on. Unset fields match anything. */
export interface FaultMatch {
  readonly verb?: Verb;
  /** Plural resource, e.g. "services". */
  readonly resource?: string;
  readonly group?: string;
  readonly namespace?: string;
  readonly name?: string;
  /** "" matches only the main resource; undefined matches any. */
  readonly subresource?: string;
  /** Act on the nth matching write (1-based); default 1. */
  readonly nth?: number;
}

export type FaultSpec =
  /** Forward; once the API server answered 2xx, kill the operator and drop the answer. */
  | { readonly kind: "crash-after"; readonly match: FaultMatch }
  /** Before forwarding a write that carries a resourceVersion, make a concurrent write so the server answers 409. */
  | { readonly kind: "conflict-before"; readonly match: FaultMatch }
  /** Answer without forwarding: a status (500, 429 with Retry-After) or a hang until the client gives up. */
  | {
      readonly kind: "fail-with";
      readonly match: FaultMatch;
      readonly status: number | "hang";
      readonly retryAfterSeconds?: number;
    };

/** What happened when a fault acted. */
export interface FiredFault {
  readonly spec: FaultSpec;
  /** Sequence number of the write it acted on, in the write log. */
  readonly seq: number;
  readonly request: RequestInfo;
}

/** A fault the proxy is acting with: it reports the outcome through `fired`. */
export interface TakenFault {
  readonly spec: FaultSpec;
  fire(seq: number): void;
  /** The fault could not act (its concurrent write or the kill failed): `fired` rejects. */
  fail(error: unknown): void;
}

/** One armed fault: fires once, reports when it did. */
export interface ArmedFault {
  readonly spec: FaultSpec;
  /** Resolves when the fault has acted (for crash-after: after the kill); rejects if it could not. */
  readonly fired: Promise<FiredFault>;
  /** Removes it without firing; `fired` never resolves then. */
  disarm(): void;
}

interface Slot {
  readonly spec: FaultSpec;
  seen: number;
  resolve: (fired: FiredFault) => void;
  reject: (error: unknown) => void;
  active: boolean;
}

/**
 * The faults armed on a proxy. Each matches writes by identity, counts them,
 * and acts on the nth; the proxy asks `take` for every write it forwards.
 */
export class FaultPlan {
  private readonly slots: Slot[] = [];

  arm(spec: FaultSpec): ArmedFault {
    let resolve!: (fired: FiredFault) => void;
    let reject!: (error: unknown) => void;
    const fired = new Promise<FiredFault>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Nobody may be waiting when a fault fails; that is not an unhandled rejection.
    fired.catch(() => undefined);
    const slot: Slot = { spec, seen: 0, resolve, reject, active: true };
    this.slots.push(slot);
    return {
      spec,
      fired,
      disarm: () => {
        slot.active = false;
      },
    };
  }

  /**
   * The fault that acts on this write, if any; it is spent. `eligible` lets
   * the proxy skip writes a fault cannot act on (conflict-before needs a
   * precondition): those are not counted toward `nth`.
   */
  take(info: RequestInfo, eligible: (spec: FaultSpec) => boolean): TakenFault | undefined {
    for (const slot of this.slots) {
      if (!slot.active || !matches(slot.spec.match, info) || !eligible(slot.spec)) continue;
      slot.seen++;
      if (slot.seen < (slot.spec.match.nth ?? 1)) continue;
      slot.active = false;
      return {
        spec: slot.spec,
        fire: (seq) => slot.resolve({ spec: slot.spec, seq, request: info }),
        fail: (error) => slot.reject(error),
      };
    }
    return undefined;
  }

  /** Faults still waiting for their write. */
  get pending(): FaultSpec[] {
    return this.slots.filter((s) => s.active).map((s) => s.spec);
  }
}

export function matches(match: FaultMatch, info: RequestInfo): boolean {
  return (
    (match.verb === undefined || match.verb === info.verb) &&
    (match.resource === undefined || match.resource === info.resource) &&
    (match.group === undefined || match.group === info.group) &&
    (match.namespace === undefined || match.namespace === info.namespace) &&
    (match.name === undefined || match.name === info.name) &&
    (match.subresource === undefined || match.subresource === (info.subresource ?? ""))
  );
}
