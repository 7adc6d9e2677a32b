import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  currentOwner,
  kindRecordPath,
  OWNER_RECORD_ENV,
  removeRecord,
  writeRecord,
} from "../cleanup/ownership.js";
import { InfrastructureError, throwIfAborted, UsageError } from "../errors.js";
import { KubeClient } from "../kube/kube-client.js";
import { findExecutable, tailLines, type CommandRunner } from "../process/command-runner.js";
import type { Logger } from "../util/logger.js";
import { isRecord } from "../util/records.js";
import { parse } from "yaml";
import type { KindClusterConfig } from "./cluster-config.js";
import type { ClusterAccess, ClusterProvider, CreateOptions, DeleteOutcome } from "./cluster-provider.js";
import { waitForWorkloadReady } from "./cluster-readiness.js";

const READY_TIMEOUT_MS = 180_000;

export interface KindProviderDeps {
  readonly runner: CommandRunner;
  readonly logger: Logger;
  /** PATH to find `kind` and `docker` on; the process's PATH by default. */
  readonly path?: string;
}

/**
 * kind: nodes are Docker containers, so Pods really run. Thin by design: the
 * kind CLI does the work; this class builds its arguments, checks its
 * prerequisites and reports failures with kind's own output.
 */
export class KindProvider implements ClusterProvider {
  readonly provider = "kind";

  constructor(
    private readonly config: KindClusterConfig,
    private readonly deps: KindProviderDeps,
  ) {}

  async create(options: CreateOptions = {}): Promise<ClusterAccess> {
    const { signal } = options;
    const kind = await this.requireKind();
    await this.requireDocker();
    // Refuse a taken name up front: cleaning up after kind's "already exists" would delete someone's cluster.
    const existing = await this.deps.runner.run([kind, "get", "clusters"]);
    if (
      existing.exitCode === 0 &&
      existing.stdout.split("\n").some((line) => line.trim() === this.config.name)
    ) {
      throw new UsageError(
        "cluster/already-exists",
        `kind cluster "${this.config.name}" already exists; choose another --name or delete it: reconcile-conformance cluster delete --provider kind --name ${this.config.name}`,
      );
    }
    await mkdir(dirname(this.config.kubeconfigPath), { recursive: true });
    // Before kind starts: a kit killed with SIGKILL from here on leaves this record behind,
    // naming a dead owner, and `clean` finds the cluster by it.
    const recordPath = this.recordPath;
    if (recordPath !== undefined) {
      await writeRecord(recordPath, {
        version: 1,
        kind: "kind-cluster",
        name: this.config.name,
        owner: currentOwner(),
        createdAt: new Date().toISOString(),
        kubeconfigPath: this.config.kubeconfigPath,
      });
    }
    this.deps.logger.info(
      `kind: creating cluster "${this.config.name}"${this.config.nodeImage ? ` from node image ${this.config.nodeImage}` : ""} (kind pulls the node image when Docker does not have it)`,
    );
    try {
      const created = await this.deps.runner.run([kind, ...kindCreateArgs(this.config)], {
        ...(recordPath === undefined ? {} : { env: { [OWNER_RECORD_ENV]: recordPath } }),
        signal,
        onStderrLine: (line) => this.deps.logger.info(`kind: ${line.trim()}`),
      });
      throwIfAborted(signal, "kind cluster create");
      if (created.exitCode !== 0) {
        throw new InfrastructureError(
          "cluster/start-failed",
          `kind create cluster "${this.config.name}" exited with ${created.exitCode}`,
          tailLines(created.stderr, 20),
        );
      }
      const access = this.access();
      const client = KubeClient.fromKubeconfig(access.kubeconfigPath, access.context);
      try {
        await waitForWorkloadReady(client, { timeoutMs: READY_TIMEOUT_MS, signal });
      } finally {
        client.close();
      }
      return access;
    } catch (error) {
      // Whatever kind lists by now, a half-made cluster may have left containers: delete by name.
      await this.deleteByName().catch((cleanupError: unknown) =>
        this.deps.logger.warn(`kind: cleanup after failed create: ${String(cleanupError)}`),
      );
      throw error;
    }
  }

  async delete(): Promise<DeleteOutcome> {
    const kind = await this.requireKind();
    // kind deletes a cluster it does not know without a word: ask first, to say which it was.
    const listed = await this.deps.runner.run([kind, "get", "clusters"]);
    if (
      listed.exitCode === 0 &&
      !listed.stdout.split("\n").some((line) => line.trim() === this.config.name)
    ) {
      if (this.recordPath !== undefined) await removeRecord(this.recordPath);
      return "absent";
    }
    await this.deleteByName();
    return "deleted";
  }

  private async deleteByName(): Promise<void> {
    const kind = await this.requireKind();
    const result = await this.deps.runner.run([kind, ...kindDeleteArgs(this.config)]);
    if (result.exitCode !== 0) {
      throw new InfrastructureError(
        "cluster/delete-failed",
        `kind delete cluster "${this.config.name}" exited with ${result.exitCode}`,
        tailLines(result.stderr, 10),
      );
    }
    await removeIfEmptyKubeconfig(this.config.kubeconfigPath);
    if (this.recordPath !== undefined) await removeRecord(this.recordPath);
  }

  /** Which kit process started this cluster (src/cleanup/ownership.ts); undefined when the config keeps no record. */
  get recordPath(): string | undefined {
    return this.config.recordDir === undefined
      ? undefined
      : kindRecordPath(this.config.recordDir, this.config.name);
  }

  async collectLogs(directory: string): Promise<string[]> {
    const kind = await this.requireKind();
    await mkdir(directory, { recursive: true });
    const result = await this.deps.runner.run([
      kind,
      "export",
      "logs",
      directory,
      "--name",
      this.config.name,
    ]);
    if (result.exitCode !== 0) {
      this.deps.logger.warn(`kind export logs failed: ${tailLines(result.stderr, 3).join(" | ")}`);
      return [];
    }
    return (await readdir(directory, { recursive: true })).map((file) => join(directory, file));
  }

  /** kind's processes live in containers; there is nothing local to track. */
  processIds(): Promise<number[]> {
    return Promise.resolve([]);
  }

  private access(): ClusterAccess {
    const context = `kind-${this.config.name}`;
    const client = KubeClient.fromKubeconfig(this.config.kubeconfigPath, context);
    client.close();
    return {
      provider: "kind",
      name: this.config.name,
      kubeconfigPath: this.config.kubeconfigPath,
      context,
      apiServerUrl: client.server,
    };
  }

  private async requireKind(): Promise<string> {
    const kind = await findExecutable("kind", this.deps.path);
    if (!kind) {
      throw new InfrastructureError(
        "cluster/kind-missing",
        "provider kind: the kind command is not on PATH. Install kind (in GitHub Actions, a setup step such as helm/kind-action provides it) or use --provider kwok, which needs no Docker.",
      );
    }
    return kind;
  }

  private async requireDocker(): Promise<void> {
    const docker = await findExecutable("docker", this.deps.path);
    if (!docker) {
      throw new InfrastructureError(
        "cluster/docker-missing",
        "provider kind: the docker command is not on PATH; kind runs its nodes as Docker containers. Use --provider kwok where there is no Docker.",
      );
    }
    const info = await this.deps.runner.run([docker, "info", "--format", "{{.ServerVersion}}"], {
      timeoutMs: 20_000,
    });
    if (info.exitCode !== 0) {
      throw new InfrastructureError(
        "cluster/docker-unavailable",
        "provider kind: no Docker engine answers (docker info failed); kind needs one. Use --provider kwok where there is no Docker.",
        tailLines(info.stderr, 5),
      );
    }
  }
}

/**
 * kind's delete takes the cluster's entries out of the kubeconfig and leaves the file. One that
 * holds nothing else is the kit's alone (its own per-cluster file in the cache): remove it, so the
 * cache does not fill with empty files. One that names other clusters is someone's: keep it.
 */
export async function removeIfEmptyKubeconfig(path: string): Promise<void> {
  const text = await readFile(path, "utf8").catch(() => undefined);
  if (text === undefined) return;
  let document: unknown;
  try {
    document = parse(text);
  } catch {
    return;
  }
  const entries = (key: string) => {
    const value = isRecord(document) ? document[key] : undefined;
    return Array.isArray(value) ? value.length : 0;
  };
  if (
    document === null ||
    (entries("clusters") === 0 && entries("contexts") === 0 && entries("users") === 0)
  ) {
    await rm(path, { force: true });
  }
}

/** Arguments of `kind create cluster`; kind writes only the kubeconfig we name. */
export function kindCreateArgs(config: KindClusterConfig): string[] {
  return [
    "create",
    "cluster",
    "--name",
    config.name,
    ...(config.nodeImage ? ["--image", config.nodeImage] : []),
    "--kubeconfig",
    config.kubeconfigPath,
    "--wait",
    "120s",
  ];
}

export function kindDeleteArgs(config: KindClusterConfig): string[] {
  return ["delete", "cluster", "--name", config.name, "--kubeconfig", config.kubeconfigPath];
}
