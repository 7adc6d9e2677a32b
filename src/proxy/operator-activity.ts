import type { Clock } from "../util/clock.js";
import type { Actor } from "./write-log.js";

/** A write as the activity rule sees it: who sent it, and where it goes. */
export interface ActivityWrite {
  readonly actor: Actor;
  /** Its namespace; undefined for a cluster-scoped write. */
  readonly namespace?: string;
}

/**
 * Whether a write counts toward the operator's activity, the silence the
 * quiescence rule waits for. Only the operator's writes do (the kit's own
 * are the stimuli, not answers to them). With `quietNamespace` set, only
 * those in that namespace or cluster-scoped ones: a cluster-wide operator
 * keeps reconciling the namespaces of earlier scenarios while they
 * terminate (and retries its refused creates there), which says nothing
 * about this scenario. The kind of object does not matter: Events and
 * Leases count like any other write.
 */
export function countsTowardActivity(write: ActivityWrite, quietNamespace: string | undefined): boolean {
  return (
    write.actor === "operator" &&
    (quietNamespace === undefined || write.namespace === undefined || write.namespace === quietNamespace)
  );
}

/**
 * The operator's write activity as the proxy sees it: how many of its
 * counted writes are in flight, and when the last one arrived or completed.
 * This is what the quiescence rule (src/scenario/quiescence.ts) reads.
 */
export class OperatorActivity {
  private inFlight = 0;
  private lastWriteAt: number;

  constructor(
    private readonly clock: Clock,
    /** Count only writes in this namespace (and cluster-scoped ones); see countsTowardActivity. */
    private readonly quietNamespace?: string,
  ) {
    this.lastWriteAt = clock.now();
  }

  /**
   * Notes a write's arrival; call the function it returns once the write is
   * answered (or will never be: a write a fault hangs on purpose is not in
   * flight). A write that does not count is not noted, and ending it does nothing.
   */
  begin(write: ActivityWrite): () => void {
    if (!countsTowardActivity(write, this.quietNamespace)) return () => undefined;
    this.inFlight++;
    this.lastWriteAt = this.clock.now();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.inFlight--;
      this.lastWriteAt = this.clock.now();
    };
  }

  /** Counted writes received and not yet answered. */
  get inFlightWrites(): number {
    return this.inFlight;
  }

  /** Milliseconds since the last counted write arrived or completed; 0 while one is in flight. */
  get idleMs(): number {
    return this.inFlight > 0 ? 0 : this.clock.now() - this.lastWriteAt;
  }
}
