import type { WatchEvent, WatchEventType } from "./watch-events.js";

/**
 * The watch faults' logic for one watch stream, between the event splitter
 * and the operator: `hold` keeps an object's events back until released,
 * then delivers them in order; `coalesce` keeps them back too and on
 * release delivers only each object's last state, as an informer that
 * missed the intermediate events would have seen it. Pure: it decides
 * what to send and when, and sends through the callback it is given; the
 * proxy arms and releases. Not yet wired into the proxy (issue 11).
 *
 * What it respects, so that client-go neither relists nor drifts into a
 * state no cluster could produce (docs/design/staleness.md):
 * - events are keyed by namespace and name, never by UID alone, and each
 *   object's events stay in order;
 * - while anything is held no BOOKMARK is forwarded: a bookmark would move
 *   the reflector's last resourceVersion past the held events, and a
 *   watch restarted from there would never get them (an event of another
 *   object does the same; that is why `end` flushes before the stream closes);
 * - an ERROR event, and the end of the stream, deliver everything held first;
 * - bytes are never changed: what is sent is exactly the frames that came.
 */

/** Which of a stream's events a watch fault takes. */
export interface WatchEventMatch {
  readonly namespace?: string;
  readonly name?: string;
  /** Event types it takes; default ADDED, MODIFIED and DELETED. */
  readonly types?: readonly ObjectEventType[];
}

export type ObjectEventType = Extract<WatchEventType, "ADDED" | "MODIFIED" | "DELETED">;

export interface GateFault {
  readonly id: string;
  readonly mode: "hold" | "coalesce";
  readonly match: WatchEventMatch;
}

/** What a fault did on this stream: its proof that it acted. */
export interface GateProof {
  readonly id: string;
  /** Events it took, with their resourceVersions, in arrival order. */
  readonly taken: readonly HeldEvent[];
  /** Events it delivered when released (coalesce: fewer than taken). */
  readonly delivered: readonly HeldEvent[];
  /** Bookmarks not forwarded while it held something. */
  readonly bookmarksWithheld: number;
}

export interface HeldEvent {
  readonly type: ObjectEventType;
  readonly namespace?: string;
  readonly name: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
}

interface Taken {
  readonly event: WatchEvent;
  readonly type: ObjectEventType;
  readonly key: string;
  /** Arrival order across the stream, so a flush of several faults keeps it. */
  readonly order: number;
}

interface Armed {
  readonly fault: GateFault;
  readonly taken: Taken[];
  bookmarksWithheld: number;
}

const OBJECT_EVENTS: readonly ObjectEventType[] = ["ADDED", "MODIFIED", "DELETED"];
/** The annotation of the bookmark that ends a watch-list stream's initial events (in JSON and protobuf alike). */
const INITIAL_EVENTS_END = Buffer.from("k8s.io/initial-events-end");

export class WatchGate {
  private readonly armed = new Map<string, Armed>();
  private arrivals = 0;

  /** Initial events of a watch-list stream are never held: the informer's cache sync waits for them. */
  private initialEvents: boolean;
  /** The last bookmark withheld: sent once nothing is held, so the reflector's position moves on again. */
  private withheldBookmark: WatchEvent | undefined;

  constructor(
    private readonly send: (event: WatchEvent) => void,
    /** Told what each fault delivered when an ERROR event or the stream's end made it deliver. */
    private readonly onFlushed: (proof: GateProof) => void = () => undefined,
    /** The stream asked for its initial state as events (sendInitialEvents=true, client-go's watch-list). */
    options: { readonly sendsInitialEvents?: boolean } = {},
  ) {
    this.initialEvents = options.sendsInitialEvents ?? false;
  }

  /** Starts a fault on this stream: from now on it takes the events it matches. */
  arm(fault: GateFault): void {
    if (this.armed.has(fault.id)) throw new Error(`watch fault ${fault.id} is armed already`);
    this.armed.set(fault.id, { fault, taken: [], bookmarksWithheld: 0 });
  }

  /** Whether the fault `id` is armed on this stream. */
  has(id: string): boolean {
    return this.armed.has(id);
  }

  /** What the fault `id` holds now. */
  heldBy(id: string): HeldEvent[] {
    return (this.armed.get(id)?.taken ?? []).map(describe);
  }

  /** Whether some fault holds an event now. */
  get holding(): boolean {
    return [...this.armed.values()].some((a) => a.taken.length > 0);
  }

  /** One event from the API server: sent now, or taken by a fault. */
  pass(event: WatchEvent): void {
    const type = event.type;
    if (type === undefined) {
      // Bytes the splitter could no longer frame: held frames must not land inside them.
      this.flushAll();
      return this.send(event);
    }
    if (this.initialEvents) {
      if (type === "BOOKMARK" && event.bytes.includes(INITIAL_EVENTS_END)) this.initialEvents = false;
      return this.send(event);
    }
    if (type === "BOOKMARK") {
      const holders = [...this.armed.values()].filter((a) => a.taken.length > 0);
      if (holders.length === 0) return this.send(event);
      for (const holder of holders) holder.bookmarksWithheld++;
      this.withheldBookmark = event;
      return;
    }
    if (type === "ERROR") {
      // The stream ends after it (a 410, an internal error): nothing held may be lost with it.
      this.flushAll();
      return this.send(event);
    }
    const name = event.object?.name;
    if (name === undefined) return this.send(event);
    const key = objectKey(event.object?.namespace, name);
    // An object already held keeps its order: its later events go to the same fault.
    const holder =
      [...this.armed.values()].find((a) => a.taken.some((t) => t.key === key)) ??
      [...this.armed.values()].find((a) => matches(a.fault.match, type, event));
    if (!holder) return this.send(event);
    holder.taken.push({ event, type, key, order: this.arrivals++ });
  }

  /** Ends a fault: delivers what it took (all of it, or each object's last state) and says what it did. */
  release(id: string): GateProof {
    const armed = this.armed.get(id);
    if (!armed) throw new Error(`watch fault ${id} is not armed on this stream`);
    this.armed.delete(id);
    const delivered = armed.fault.mode === "hold" ? armed.taken : coalesced(armed.taken);
    for (const taken of delivered) this.send(taken.event);
    this.sendWithheldBookmark();
    return {
      id,
      taken: armed.taken.map(describe),
      delivered: delivered.map(describe),
      bookmarksWithheld: armed.bookmarksWithheld,
    };
  }

  /** Before the stream closes: every fault delivers what it holds, in arrival order (they stay armed, holding nothing). */
  end(): GateProof[] {
    return this.flushAll();
  }

  private flushAll(): GateProof[] {
    const proofs: GateProof[] = [];
    const deliveries: Taken[] = [];
    for (const [id, armed] of this.armed) {
      if (armed.taken.length === 0 && armed.bookmarksWithheld === 0) continue;
      const delivered = armed.fault.mode === "hold" ? armed.taken : coalesced(armed.taken);
      deliveries.push(...delivered);
      proofs.push({
        id,
        taken: armed.taken.map(describe),
        delivered: delivered.map(describe),
        bookmarksWithheld: armed.bookmarksWithheld,
      });
      armed.taken.length = 0;
      armed.bookmarksWithheld = 0;
    }
    for (const taken of deliveries.sort((a, b) => a.order - b.order)) this.send(taken.event);
    this.sendWithheldBookmark();
    for (const proof of proofs) this.onFlushed(proof);
    return proofs;
  }

  /**
   * The stream was cut (its client went away, or its upstream failed):
   * nothing can be delivered any more. What the faults held is reported as
   * taken and never delivered.
   */
  abandon(): GateProof[] {
    const proofs: GateProof[] = [];
    for (const [id, armed] of this.armed) {
      if (armed.taken.length === 0) continue;
      proofs.push({
        id,
        taken: armed.taken.map(describe),
        delivered: [],
        bookmarksWithheld: armed.bookmarksWithheld,
      });
      armed.taken.length = 0;
      armed.bookmarksWithheld = 0;
    }
    this.withheldBookmark = undefined;
    for (const proof of proofs) this.onFlushed(proof);
    return proofs;
  }

  /**
   * Its resourceVersion is at least that of every event held when it came:
   * once they are all delivered, it moves the reflector's last
   * resourceVersion past them again (they came after the other objects'
   * later events, and set it back).
   */
  private sendWithheldBookmark(): void {
    if (this.holding || !this.withheldBookmark) return;
    const bookmark = this.withheldBookmark;
    this.withheldBookmark = undefined;
    this.send(bookmark);
  }
}

function matches(match: WatchEventMatch, type: ObjectEventType, event: WatchEvent): boolean {
  return (
    (match.types ?? OBJECT_EVENTS).includes(type) &&
    (match.name === undefined || match.name === event.object?.name) &&
    (match.namespace === undefined || match.namespace === event.object?.namespace)
  );
}

function objectKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ""}/${name}`;
}

/**
 * Each object's last state, objects in the order they were first taken.
 * Per object, its events are split into lives (a new UID is a new life):
 * a life that began with ADDED and ended with DELETED inside the window
 * is delivered as nothing (the informer never knew it); any other life is
 * delivered as its last event (a life the informer knew that ended
 * DELETED is delivered as that DELETED, never dropped, or it would stay a
 * ghost in the informer's cache).
 */
function coalesced(taken: readonly Taken[]): Taken[] {
  const byKey = new Map<string, Taken[]>();
  for (const t of taken) byKey.set(t.key, [...(byKey.get(t.key) ?? []), t]);
  const out: Taken[] = [];
  for (const events of byKey.values()) {
    const lives: Taken[][] = [];
    for (const t of events) {
      const current = lives.at(-1);
      const uid = t.event.object?.uid;
      const previousUid = current?.at(-1)?.event.object?.uid;
      const newLife = !current || (uid !== undefined && previousUid !== undefined && uid !== previousUid);
      if (newLife) lives.push([t]);
      else current.push(t);
    }
    for (const life of lives) {
      const first = life[0];
      const last = life.at(-1);
      if (!first || !last) continue;
      if (first.type === "ADDED" && last.type === "DELETED") continue;
      out.push(last);
    }
  }
  return out;
}

function describe(taken: Taken): HeldEvent {
  const object = taken.event.object;
  return {
    type: taken.type,
    ...(object?.namespace ? { namespace: object.namespace } : {}),
    name: object?.name ?? "",
    ...(object?.uid ? { uid: object.uid } : {}),
    ...(object?.resourceVersion ? { resourceVersion: object.resourceVersion } : {}),
  };
}
