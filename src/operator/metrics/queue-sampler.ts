import http from "node:http";
import type { Clock } from "../../util/clock.js";
import { failedReading, readQueueMetrics, type QueueReading } from "./queue-readings.js";

/** How often the endpoint is read while the operator runs. */
export const SAMPLE_INTERVAL_MS = 100;
/** How long one read may take before it counts as failed. */
const READ_TIMEOUT_MS = 1_000;
/** Readings kept: five minutes' worth, more than any wait's stimulus lies back. */
const KEPT_READINGS = 3_000;

/**
 * Reads an operator's metrics endpoint every SAMPLE_INTERVAL_MS from
 * `start` to `stop`, keeping the readings (oldest first) for the
 * quiescence rule. Each start is a new run: counters restart with the
 * process, and the rule compares readings of one run only.
 */
export class QueueSampler {
  private readonly kept: QueueReading[] = [];
  private run = 0;
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
  /**
   * One kept-alive connection to the endpoint: ten reads a second per
   * operator process, where fetch's own machinery (undici, a timeout signal
   * per read) cost the kit more than the reads themselves in a profile of a
   * full run.
   */
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  constructor(
    private readonly url: string,
    private readonly clock: Clock,
  ) {}

  /** The readings so far, oldest first. */
  get readings(): readonly QueueReading[] {
    return this.kept;
  }

  /** Starts reading for a new run of the operator (its first start or a restart). */
  start(): void {
    this.run++;
    this.timer ??= setInterval(() => void this.sample(), SAMPLE_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.agent.destroy(); // the process is gone or going; a restart connects anew
  }

  /** One reading, unless the previous one is still on its way (a slow endpoint is read less often, not piled up). */
  private async sample(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    const run = this.run;
    // Dated when asked: the state it shows is from then or later, so it never counts as earlier than it is.
    const at = this.clock.now();
    try {
      const response = await this.read();
      this.keep(
        response.status >= 200 && response.status < 300
          ? readQueueMetrics(response.text, at, run)
          : failedReading(at, run, `${this.url} answered ${response.status}`),
      );
    } catch (error) {
      this.keep(failedReading(at, run, `${this.url}: ${describe(error)}`));
    } finally {
      this.reading = false;
    }
  }

  /** GET of the endpoint, uncompressed: it is on this machine, and gzip ten times a second cost both the operator and the kit. */
  private read(): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const request = http.get(
        this.url,
        { agent: this.agent, headers: { "accept-encoding": "identity" }, timeout: READ_TIMEOUT_MS },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () =>
            resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
          );
          response.on("error", reject);
        },
      );
      request.on("timeout", () => request.destroy(new Error(`no answer within ${READ_TIMEOUT_MS} ms`)));
      request.on("error", reject);
    });
  }

  private keep(reading: QueueReading): void {
    // A reading begun before a restart belongs to the run that is gone.
    if (reading.run !== this.run) return;
    this.kept.push(reading);
    if (this.kept.length > KEPT_READINGS) this.kept.splice(0, this.kept.length - KEPT_READINGS);
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return `${error.message}${cause}`;
  }
  return String(error);
}
