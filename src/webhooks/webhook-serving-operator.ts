import { connect } from "node:tls";
import type { PortLease } from "../cluster/port-reservation.js";
import { AbortedError, InfrastructureError } from "../errors.js";
import { isAlreadyExists, isNotFound } from "../kube/api-errors.js";
import type { KubeClient, KubeObject } from "../kube/kube-client.js";
import { startOnFreePort } from "../operator/free-port-start.js";
import type { OperatorProcess } from "../operator/operator-process.js";
import type { OperatorUnderTest } from "../operator/operator-under-test.js";
import { describeStartFailure, startFailureCause } from "../operator/start-failure.js";
import type { KillRecord } from "../proxy/faults.js";
import { pollUntil } from "../util/poll.js";

export interface WebhookServingOptions {
  /** The operator process, told to serve its webhooks on `port`. */
  readonly operatorFor: (port: number) => OperatorProcess;
  /** This scenario's copies of the webhook configurations, calling `port` (webhook-configurations.ts). */
  readonly configurationsFor: (port: number) => readonly KubeObject[];
  /** Where the operator's webhook server listens on 127.0.0.1; "free": a free port picked at the first start. */
  readonly port: number | "free";
  /** The CA the server's certificate must verify against (the kit's). */
  readonly ca: string;
  /** The kit's own client: the configurations are the kit's, not the operator's writes. */
  readonly kube: KubeClient;
  /** How long the webhook server may take to answer once the operator watches its custom resource. */
  readonly answerTimeoutMs: number;
}

/** One operator process serving webhooks, and what was installed to call it. */
interface ServingProcess {
  readonly inner: OperatorProcess;
  readonly port: number;
  readonly configurations: readonly KubeObject[];
  /** When the port is a free one: given back when the operator stops for good. */
  readonly lease?: PortLease;
}

/**
 * An operator process that serves its own webhooks. Before its first start
 * the scenario's webhook configurations are installed (so the sample, created
 * after the start, passes them as anyone's would); each start and restart
 * resolves only once the webhook server answers TLS with the kit's
 * certificate, so a write right after a restart does not meet a webhook that
 * is not there yet. The configurations go before the operator stops: a
 * webhook nobody serves would refuse the namespace's deletion of the custom
 * resource.
 */
export class WebhookServingOperator implements OperatorUnderTest {
  /** Made at the first start, once its port is known (leased when it is a free one). */
  private process: ServingProcess | undefined;
  private installed = false;

  constructor(private readonly options: WebhookServingOptions) {}

  /** The port its webhook server was told (undefined before the first start). */
  get port(): number | undefined {
    return this.process?.port;
  }

  async start(signal?: AbortSignal): Promise<void> {
    if (this.process === undefined) {
      const { port } = this.options;
      if (port === "free") {
        await startOnFreePort({
          make: (lease) => (this.process = this.serving(lease.port, lease)),
          start: (made) => this.startServing(made, signal),
          discard: (made) => this.stopServing(made),
        });
        return;
      }
      this.process = this.serving(port);
    }
    await this.startServing(this.process, signal);
  }

  private serving(port: number, lease?: PortLease): ServingProcess {
    return {
      inner: this.options.operatorFor(port),
      port,
      configurations: this.options.configurationsFor(port),
      ...(lease ? { lease } : {}),
    };
  }

  private async startServing(process: ServingProcess, signal?: AbortSignal): Promise<void> {
    if (!this.installed) await this.install(process.configurations);
    await process.inner.start(signal);
    await this.untilAnswering(process.inner, process.port, signal);
  }

  private async stopServing(process: ServingProcess): Promise<void> {
    try {
      await this.uninstall(process.configurations);
    } finally {
      await process.inner.stop();
    }
  }

  async restart(signal?: AbortSignal): Promise<void> {
    if (this.process === undefined) return this.start(signal);
    await this.process.inner.restart(signal);
    await this.untilAnswering(this.process.inner, this.process.port, signal);
  }

  crash(): Promise<KillRecord> {
    if (this.process === undefined) throw new Error("the operator was never started");
    return this.process.inner.crash();
  }

  async stop(): Promise<void> {
    if (this.process === undefined) return;
    try {
      await this.stopServing(this.process);
    } finally {
      this.process.lease?.release();
    }
  }

  logTail(lines?: number): Promise<string[]> {
    return this.process ? this.process.inner.logTail(lines) : Promise.resolve([]);
  }

  private async install(configurations: readonly KubeObject[]): Promise<void> {
    this.installed = true;
    for (const configuration of configurations) {
      try {
        await this.options.kube.create(configuration);
      } catch (error) {
        // A copy left by a run killed before its cleanup (same namespace name is all but impossible): replaced.
        if (!isAlreadyExists(error)) throw error;
        await this.options.kube.delete(refOf(configuration));
        await this.options.kube.create(configuration);
      }
    }
  }

  private async uninstall(configurations: readonly KubeObject[]): Promise<void> {
    if (!this.installed) return;
    for (const configuration of configurations) {
      await this.options.kube.delete(refOf(configuration)).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
    }
    this.installed = false;
  }

  private async untilAnswering(inner: OperatorProcess, port: number, signal?: AbortSignal): Promise<void> {
    const { ca } = this.options;
    let last = "";
    try {
      await pollUntil(
        async () => {
          if (!inner.running) {
            const tail = await inner.logTail();
            throw new InfrastructureError(
              "operator/exited",
              `operator exited before its webhook server answered on 127.0.0.1:${port}${describeStartFailure(startFailureCause(tail))}`,
              tail,
            );
          }
          const answer = await tlsAnswer(port, ca);
          if (answer === "answered") return { done: true, value: undefined };
          last = answer;
          return { done: false, reason: answer };
        },
        {
          description: `the webhook server on 127.0.0.1:${port}`,
          timeoutMs: this.options.answerTimeoutMs,
          intervalMs: 100,
          ...(signal ? { signal } : {}),
        },
      );
    } catch (error) {
      if (error instanceof InfrastructureError || error instanceof AbortedError) throw error;
      const tail = await inner.logTail();
      await inner.crash().catch(() => undefined);
      throw new InfrastructureError(
        "operator/webhook-not-answering",
        `the operator watched its custom resource but its webhook server did not answer on 127.0.0.1:${port} within ${Math.round(this.options.answerTimeoutMs / 1000)} s (${last || "no answer"})${hintFor(last)}`,
        tail,
      );
    }
  }
}

/** "answered", or why not: the TLS handshake with the kit's CA as the only trusted root. */
export function tlsAnswer(port: number, ca: string, timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port, ca, timeout: timeoutMs });
    const done = (answer: string) => {
      socket.destroy();
      resolve(answer);
    };
    socket.once("secureConnect", () => done("answered"));
    socket.once("timeout", () => done("no TLS answer"));
    socket.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNREFUSED") done("nothing listens there");
      else done(`its certificate is not the kit's (${error.code ?? error.message})`);
    });
  });
}

function hintFor(last: string): string {
  if (last.startsWith("nothing listens")) {
    return ": is operator.webhooks.port the port its webhook server listens on, and are its webhooks switched on (kubebuilder: ENABLE_WEBHOOKS)?";
  }
  if (last.startsWith("its certificate")) {
    return ": it serves a certificate from somewhere else; say where it reads tls.crt and tls.key with operator.webhooks.certDir, certDirArg or certDirEnv";
  }
  return "";
}

function refOf(object: KubeObject): { apiVersion: string; kind: string; name: string } {
  return { apiVersion: object.apiVersion ?? "", kind: object.kind ?? "", name: object.metadata?.name ?? "" };
}
