import type { PortLease } from "../../cluster/port-reservation.js";
import type { KillRecord } from "../../proxy/faults.js";
import type { Clock } from "../../util/clock.js";
import { startOnFreePort } from "../free-port-start.js";
import type { OperatorUnderTest } from "../operator-under-test.js";
import type { QueueReading } from "./queue-readings.js";
import { QueueSampler } from "./queue-sampler.js";

/**
 * An operator process told to publish its metrics on a free port of its
 * own (operator.metrics), whose work queues are read from each start (once
 * it watches its custom resource) until it stops: the readings the
 * quiescence rule decides from (src/scenario/quiescence.ts).
 */
export class MetricsReadingOperator implements OperatorUnderTest {
  /** Made at the first start, once its port is known. */
  private process: { inner: OperatorUnderTest; sampler: QueueSampler; lease: PortLease } | undefined;

  constructor(
    private readonly options: {
      /** The operator, told to publish its metrics on `port`. */
      readonly operatorFor: (port: number) => OperatorUnderTest;
      /** The endpoint's path, e.g. /metrics. */
      readonly path: string;
      readonly clock: Clock;
    },
  ) {}

  /** The readings of its work queues so far, oldest first. */
  get queueReadings(): readonly QueueReading[] {
    return this.process?.sampler.readings ?? [];
  }

  /** The endpoint it was told (undefined before the first start). */
  get url(): string | undefined {
    return this.process && this.urlOf(this.process.lease.port);
  }

  async start(signal?: AbortSignal): Promise<void> {
    if (this.process === undefined) {
      await startOnFreePort({
        make: (lease) =>
          (this.process = {
            inner: this.options.operatorFor(lease.port),
            sampler: new QueueSampler(this.urlOf(lease.port), this.options.clock),
            lease,
          }),
        start: (made) => made.inner.start(signal),
        discard: (made) => made.inner.stop(),
      });
    } else {
      await this.process.inner.start(signal);
    }
    this.process?.sampler.start();
  }

  private urlOf(port: number): string {
    return `http://127.0.0.1:${port}${this.options.path}`;
  }

  async restart(signal?: AbortSignal): Promise<void> {
    if (this.process === undefined) return this.start(signal);
    await this.process.inner.restart(signal);
    this.process.sampler.start();
  }

  crash(): Promise<KillRecord> {
    if (this.process === undefined) throw new Error("the operator was never started");
    return this.process.inner.crash();
  }

  async stop(): Promise<void> {
    if (this.process === undefined) return;
    this.process.sampler.stop();
    try {
      await this.process.inner.stop();
    } finally {
      this.process.lease.release();
    }
  }

  logTail(lines?: number): Promise<string[]> {
    return this.process ? this.process.inner.logTail(lines) : Promise.resolve([]);
  }
}
