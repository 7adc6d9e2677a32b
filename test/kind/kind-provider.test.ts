import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findLeftovers } from "../../src/cleanup/leftovers.js";
import { kindRecordPath } from "../../src/cleanup/ownership.js";
import {
  kindRecordDir,
  processEnvironment,
  type ClusterEnvironment,
} from "../../src/cluster/cluster-config.js";
import { pathExists } from "../../src/util/files.js";
import { pollUntil } from "../../src/util/poll.js";
import { kindClusters, kindContainers, requireKind, runToEnd } from "../support/kind.js";
import { uniqueClusterName } from "../support/kwok-cluster.js";

// The kind provider for real: a kit killed with SIGKILL while `cluster create --provider kind`
// runs leaves a cluster in Docker and its ownership record; `clean` finds it by the record and
// deletes it, leaving no container, no record and no kubeconfig. The committed bundle runs, with a
// cache of the test's own.
const CLI = join(import.meta.dirname, "../../dist/cli.js");

let cache: string;
let environment: ClusterEnvironment;
const names: string[] = [];

beforeAll(async () => {
  await requireKind();
  cache = await mkdtemp(join(tmpdir(), "rc-kind-clean-"));
  environment = {
    env: { ...process.env, RECONCILE_CONFORMANCE_CACHE: cache },
    homeDir: processEnvironment().homeDir,
  };
});

afterAll(async () => {
  // Whatever a failed assertion left: by name, with kind itself.
  for (const name of names) await runToEnd(["kind", "delete", "cluster", "--name", name]);
  await rm(cache, { recursive: true, force: true });
}, 180_000);

describe("clean after a kind cluster create killed with SIGKILL", () => {
  it("deletes the cluster the dead kit left in Docker, its record and its kubeconfig", async () => {
    const name = uniqueClusterName("rc-kind-killed");
    names.push(name);
    const kit = spawn(process.execPath, [CLI, "cluster", "create", "--provider", "kind", "--name", name], {
      env: environment.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    kit.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      kit.once("close", (_code, signal) => resolve(signal)),
    );
    // Killed once kind has started the node's container, while it is still bringing the cluster up.
    await pollUntil(
      async () => {
        if (kit.exitCode !== null) throw new Error(`the kit exited early: ${stderr}`);
        return (await kindContainers(name)).length > 0
          ? { done: true, value: undefined }
          : { done: false, reason: "no node container yet" };
      },
      { description: `the node container of ${name}`, timeoutMs: 120_000, intervalMs: 200 },
    );
    kit.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");

    const record = kindRecordPath(kindRecordDir(environment), name);
    expect(await findLeftovers(environment)).toEqual([
      expect.objectContaining({ kind: "kind-cluster", name, ownerPid: kit.pid, path: record }),
    ]);
    const listed = await runToEnd([process.execPath, CLI, "clean", "--dry-run"], { env: environment.env });
    expect(listed.stdout).toContain(
      `would remove kind cluster ${name} (started by pid ${kit.pid}, which is gone`,
    );

    const cleaned = await runToEnd([process.execPath, CLI, "clean"], { env: environment.env });
    expect(cleaned.code, cleaned.stdout + cleaned.stderr).toBe(0);
    expect(cleaned.stdout).toContain(
      `removed kind cluster ${name} (started by pid ${kit.pid}, which is gone`,
    );
    // The kind process the dead kit started may still be creating: it fails once its node is gone.
    await pollUntil(
      async () =>
        (await kindContainers(name)).length === 0 && !(await kindClusters()).includes(name)
          ? { done: true, value: undefined }
          : { done: false, reason: "its containers are still there" },
      { description: `${name} gone from Docker`, timeoutMs: 120_000, intervalMs: 1000 },
    );
    expect(await pathExists(record)).toBe(false);
    expect(await pathExists(join(cache, "kind", `${name}.kubeconfig`))).toBe(false);
    expect(await findLeftovers(environment, { all: true })).toEqual([]);
  }, 600_000); // a kind cluster and a whole run: minutes, not the default seconds
});
