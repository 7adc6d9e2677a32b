import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/report/report-model.js";
import { runExampleOperator, writeExampleContract } from "../support/example-run.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import { runCli } from "../support/run-cli.js";
import { exampleOperatorBinary } from "../support/webapp-example.js";

// Rerunning one failed scenario, as the report says to: the stale-retry mutant's conflict on its
// Deployment, its command taken from the report, run by the CLI alone with --keep.
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster("rerun");
}, 120_000);

afterAll(async () => {
  cluster?.client.close();
  await cluster?.provider.delete();
});

/** The words of a command as rerunCommand writes them (plain words and single-quoted ones). */
function shellWords(command: string): string[] {
  return [...command.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) =>
    m[1] !== undefined ? m[1].replaceAll("'\\''", "'") : (m[2] ?? ""),
  );
}

describe("rerun one scenario", () => {
  it(
    "runs the scenario a failed verdict names, alone, and keeps its namespace, saying how to reach and remove it",
    { timeout: 300_000 },
    async () => {
      const whole = await runExampleOperator(cluster, exampleOperatorBinary(), {
        bug: "stale-retry",
        strict: true,
        suites: ["conflict"],
        checks: ["conflict/child-update"],
      });
      const failed = whole.checks[0]?.scenarios.find((s) => s.status === "failed");
      expect(failed?.rerun).toBeDefined();
      const words = shellWords(failed?.rerun ?? "");
      expect(words.slice(0, 3)).toEqual(["npx", "reconcile-conformance", "run"]);
      const flag = (name: string) => words[words.indexOf(name) + 1] ?? "";
      const scenario = flag("--scenario");
      expect(scenario).toBe(`conflict/child-update#${failed?.target ?? ""}`);
      expect(words.at(-1)).toBe("--keep");

      const reportDir = await mkdtemp(join(tmpdir(), "rc-rerun-"));
      const kubeconfig = cluster.access.kubeconfigPath;
      const run = await runCli([
        "run",
        "--config",
        flag("--config"),
        "--cluster",
        "existing",
        "--kubeconfig",
        kubeconfig,
        "--scenario",
        scenario,
        "--keep",
        "--report-dir",
        reportDir,
      ]);
      expect(run.code, run.stderr).toBe(1);
      const report = JSON.parse(await readFile(join(reportDir, "report.json"), "utf8")) as RunReport;
      expect(report.checks.map((c) => [c.id, c.scenarios.map((s) => [s.target, s.status])])).toEqual([
        ["conflict/child-update", [[failed?.target, "failed"]]],
      ]);
      expect(run.stderr).toContain(`rerun it alone: npx reconcile-conformance run --config`);
      const kept =
        /namespace kept for inspection: KUBECONFIG=(\S+) kubectl -n (rc-conflict-deployments-\w+) get all,configmaps,events; remove it with: kubectl delete namespace (\S+)/.exec(
          run.stderr,
        );
      expect(kept, run.stderr).not.toBeNull();
      expect(kept?.[1]).toBe(kubeconfig);
      expect(kept?.[3]).toBe(kept?.[2]);
      const namespace = await cluster.client.get({
        apiVersion: "v1",
        kind: "Namespace",
        name: kept?.[2] ?? "",
      });
      expect(namespace.metadata?.deletionTimestamp).toBeUndefined();
    },
  );

  it(
    "refuses a scenario the run does not have, naming the ones it has (exit 2)",
    { timeout: 300_000 },
    async () => {
      const contract = await writeExampleContract(exampleOperatorBinary());
      const run = await runCli([
        "run",
        "--config",
        contract,
        "--cluster",
        "existing",
        "--kubeconfig",
        cluster.access.kubeconfigPath,
        "--scenario",
        "conflict/child-update#services/hello (update)",
        "--report-dir",
        await mkdtemp(join(tmpdir(), "rc-rerun-")),
      ]);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(
        '--scenario "conflict/child-update#services/hello (update)": this run has no such scenario; conflict/child-update has: "conflict/child-update#deployments.apps/hello (update)"',
      );
    },
  );
});
