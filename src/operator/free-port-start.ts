import { leaseFreePort, portTakenIn, type PortLease } from "../cluster/port-reservation.js";

/** How many free ports a first start tries before the last one's error stands. */
export const FREE_PORT_TRIES = 3;

/**
 * The first start of an operator told a port of its own (its metrics or
 * webhook server): on a leased free port, and again on another when its
 * start fails because that port was taken. A pick cannot hold the port for
 * the process it is for, so another process on the machine (a second kit, a
 * test worker) may bind it first; the operator is not at fault, and another
 * port will do. `make` builds what is started on the lease (and may keep
 * it, so that a start that fails for good still shows its log); `discard`
 * stops one whose port was taken.
 */
export async function startOnFreePort<T>(options: {
  readonly make: (lease: PortLease) => T;
  readonly start: (made: T) => Promise<void>;
  readonly discard: (made: T) => Promise<void>;
  readonly tries?: number;
}): Promise<T> {
  const tries = options.tries ?? FREE_PORT_TRIES;
  for (let attempt = 1; ; attempt++) {
    const lease = await leaseFreePort();
    const made = options.make(lease);
    try {
      await options.start(made);
      return made;
    } catch (error) {
      if (attempt >= tries || !portTakenIn(error, lease.port)) throw error;
      await options.discard(made).catch(() => undefined);
      lease.release();
    }
  }
}
