/**
 * A work queue of keys ("namespace/name"), with the semantics of client-go's
 * rate-limited workqueue, which controller-runtime builds on:
 *
 * - a key waits in the queue at most once, however often it is added (events
 *   about one object coalesce into one reconcile);
 * - a key being processed is never handed out again until `done`; added
 *   meanwhile, it is queued again when `done` is called, so the change that
 *   arrived during the reconcile is not lost;
 * - `addRateLimited` requeues a failed key after a per-key exponential backoff
 *   (base, 2 × base, 4 × base, … up to max); `forget` resets it after a success;
 * - `addAfter` queues a key later (the earliest of several delays wins);
 * - `shutDown` hands out nothing more, not even keys still queued: every
 *   `get`, waiting or later, resolves to undefined.
 *
 * Plain logic with no imports: timers are the global ones (tests fake them).
 */
export interface WorkQueueOptions {
  /** The first retry's delay (default 100 ms). */
  readonly baseDelayMs?: number;
  /** The longest retry delay (default 10 s). */
  readonly maxDelayMs?: number;
}

export class WorkQueue {
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  /** Keys ready to be handed out, in order. */
  readonly #queue: string[] = [];
  /** Keys that need processing: in #queue, or waiting for their current processing to end. */
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #delayed = new Map<
    string,
    { readonly at: number; readonly timer: ReturnType<typeof setTimeout> }
  >();
  readonly #waiters: ((key: string | undefined) => void)[] = [];
  #shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.#baseDelayMs = options.baseDelayMs ?? 100;
    this.#maxDelayMs = options.maxDelayMs ?? 10_000;
  }

  /** Queues the key unless it already waits. */
  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (this.#processing.has(key)) return; // queued again by done()
    this.#push(key);
  }

  /** Queues the key after `delayMs`; a key already due sooner keeps its earlier time. */
  addAfter(key: string, delayMs: number): void {
    if (this.#shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + delayMs;
    const pending = this.#delayed.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, delayMs);
    this.#delayed.set(key, { at, timer });
  }

  /** Queues the key again after its backoff, which doubles with each call until `forget`. */
  addRateLimited(key: string): void {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    this.addAfter(key, this.backoffMs(failures));
  }

  /** The delay of the retry after `failures` earlier failures. */
  backoffMs(failures: number): number {
    return Math.min(this.#baseDelayMs * 2 ** Math.min(failures, 30), this.#maxDelayMs);
  }

  /** Ends the key's backoff: its next failure waits the base delay again. */
  forget(key: string): void {
    this.#failures.delete(key);
  }

  /** How many times the key was requeued by addRateLimited since its last forget. */
  numRequeues(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** The next key to process (the caller must call done), or undefined once shut down. */
  get(): Promise<string | undefined> {
    if (this.#shuttingDown) return Promise.resolve(undefined);
    const key = this.#queue.shift();
    if (key !== undefined) return Promise.resolve(this.#start(key));
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Marks the key processed; queues it again if it was added meanwhile. */
  done(key: string): void {
    this.#processing.delete(key);
    if (this.#dirty.has(key) && !this.#shuttingDown) this.#push(key);
  }

  /** Hands out nothing more (queued keys are dropped with the delayed ones); every get resolves to undefined. */
  shutDown(): void {
    this.#shuttingDown = true;
    for (const { timer } of this.#delayed.values()) clearTimeout(timer);
    this.#delayed.clear();
    for (const waiter of this.#waiters.splice(0)) waiter(undefined);
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Keys waiting to be handed out now (not the delayed ones). */
  get length(): number {
    return this.#queue.length;
  }

  #push(key: string): void {
    const waiter = this.#waiters.shift();
    if (waiter) waiter(this.#start(key));
    else this.#queue.push(key);
  }

  #start(key: string): string {
    this.#dirty.delete(key);
    this.#processing.add(key);
    return key;
  }
}
