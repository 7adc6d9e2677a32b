import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { KubeClient } from "../../src/kube/kube-client.js";
import { findProcessesByArgument } from "../../src/process/process-table.js";
import { pathExists } from "../../src/util/files.js";
import { kwokConfig, uniqueClusterName } from "../support/kwok-cluster.js";
import { runCli } from "../support/run-cli.js";

describe("reconcile-conformance cluster (CLI)", () => {
  it("creates a kwok cluster, prints its kubeconfig as the last stdout line, and deletes it", async () => {
    const name = uniqueClusterName("rc-cli");
    const created = await runCli(["cluster", "create", "--provider", "kwok", "--name", name]);
    try {
      expect(created.code, created.stderr).toBe(0);
      const kubeconfig = created.stdout.trim().split("\n").at(-1) ?? "";
      expect(await pathExists(kubeconfig)).toBe(true);
      expect(created.stderr).toContain(`kwok: cluster "${name}" ready`);

      const client = KubeClient.fromKubeconfig(kubeconfig);
      const nodes = await client.list("v1", "Node");
      client.close();
      expect(nodes.length).toBe(1);
    } finally {
      const deleted = await runCli(["cluster", "delete", "--name", name]);
      expect(deleted.code, deleted.stderr).toBe(0);
      expect(deleted.stderr).toContain(`cluster "${name}" deleted`);
    }
    const clusterDir = join(kwokConfig(name).workDir, "clusters", name);
    expect(findProcessesByArgument(`${clusterDir}/`)).toEqual([]);
    expect(await pathExists(clusterDir)).toBe(false);
  });

  it("cleans up everything on Ctrl-C during create and exits with the infrastructure code", async () => {
    const name = uniqueClusterName("rc-sigint");
    const clusterDir = join(kwokConfig(name).workDir, "clusters", name);
    const run = await runCli(["cluster", "create", "--name", name], {
      // Interrupt once the control plane runs: processes exist that must be stopped.
      interruptWhen: (stderr) => stderr.includes("control plane running"),
    });
    expect(run.stderr).toContain("SIGINT: stopping and cleaning up");
    expect(run.code).toBe(3);
    expect(run.stdout).toBe("");
    expect(findProcessesByArgument(`${clusterDir}/`)).toEqual([]);
    expect(await pathExists(clusterDir)).toBe(false);
  });

  it("says there was no such cluster when asked to delete an absent one, and exits 0", async () => {
    const name = uniqueClusterName("rc-absent");
    const deleted = await runCli(["cluster", "delete", "--name", name]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stderr).toContain(`no kwok cluster named "${name}": nothing to delete`);
    expect(deleted.stderr).not.toContain("deleted");
  });

  it("rejects bad input with exit code 2 and names the flag", async () => {
    const run = await runCli(["cluster", "create", "--provider", "minikube"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--provider "minikube" is not a provider');
  });
});
