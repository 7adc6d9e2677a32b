import type { ServerResponse } from "node:http";
import type { WatchEvent } from "./watch-events.js";
import { WatchGate, type GateProof, type HeldEvent, type WatchEventMatch } from "./watch-gate.js";

/** A watch fault as a suite arms it: on the operator's watches of one resource. */
export interface WatchFaultSpec {
  readonly mode: "hold" | "coalesce";
  readonly group: string;
  /** Plural resource, e.g. "services". */
  readonly resource: string;
  readonly match: WatchEventMatch;
}

/**
 * What a watch fault did over all the streams it acted on, their proofs
 * joined (taken and delivered in arrival order per stream; delivered at its
 * release, or when a stream ended while it held them).
 */
export interface WatchFaultProof extends GateProof {
  /** How many of the operator's watch streams it was armed on. */
  readonly streams: number;
}

export interface ArmedWatchFault {
  readonly id: string;
  readonly spec: WatchFaultSpec;
  /** What it has taken so far and not delivered yet. */
  held(): readonly HeldEvent[];
  /** Delivers what it holds (in order, or each object's last state) and ends it. */
  release(): WatchFaultProof;
}

interface Stream {
  readonly resource: string;
  readonly gate: WatchGate;
}

/**
 * The operator's watch faults and its open watch streams' gates: a fault
 * is armed on every stream of its resource, those open and those opened
 * while it is armed, and its proof gathers what each stream did.
 */
export class WatchFaults {
  private readonly streams = new Set<Stream>();
  private readonly armed = new Map<
    string,
    { readonly spec: WatchFaultSpec; readonly proofs: GateProof[]; streams: number }
  >();
  private count = 0;

  /** The gate of a new watch stream; forgotten when the response closes. */
  gateFor(
    info: { readonly group: string; readonly resource: string },
    send: (event: WatchEvent) => void,
    response: ServerResponse,
    options: { readonly sendsInitialEvents: boolean },
  ): WatchGate {
    const record = (proof: GateProof) => this.armed.get(proof.id)?.proofs.push(proof);
    const stream: Stream = { resource: resourceKey(info), gate: new WatchGate(send, record, options) };
    for (const [id, fault] of this.armed) {
      if (resourceKey(fault.spec) !== stream.resource) continue;
      stream.gate.arm({ id, mode: fault.spec.mode, match: fault.spec.match });
      fault.streams++;
    }
    this.streams.add(stream);
    // A stream that ends normally has flushed its gate already (watchEventStream's flush); one
    // cut before its end delivers nothing more, and its proof says so.
    response.once("close", () => {
      stream.gate.abandon();
      this.streams.delete(stream);
    });
    return stream.gate;
  }

  arm(spec: WatchFaultSpec): ArmedWatchFault {
    const id = `watch-${spec.mode}#${++this.count}`;
    const record = { spec, proofs: [] as GateProof[], streams: 0 };
    this.armed.set(id, record);
    for (const stream of this.streams) {
      if (stream.resource !== resourceKey(spec)) continue;
      stream.gate.arm({ id, mode: spec.mode, match: spec.match });
      record.streams++;
    }
    return {
      id,
      spec,
      held: () => [...this.streams].flatMap((s) => s.gate.heldBy(id)),
      release: () => {
        this.armed.delete(id);
        for (const stream of this.streams) {
          if (stream.gate.has(id)) record.proofs.push(stream.gate.release(id));
        }
        return {
          id,
          taken: record.proofs.flatMap((p) => p.taken),
          delivered: record.proofs.flatMap((p) => p.delivered),
          bookmarksWithheld: record.proofs.reduce((sum, p) => sum + p.bookmarksWithheld, 0),
          streams: record.streams,
        };
      },
    };
  }
}

function resourceKey(info: { readonly group: string; readonly resource: string }): string {
  return `${info.resource}.${info.group}`;
}
