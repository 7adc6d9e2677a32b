import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/report/report-model.js";
import { runExampleOperator } from "../support/example-run.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import { exampleOperatorBinary } from "../support/webapp-example.js";

// Quiescence from the operator's own work queues, against a real kube-apiserver: the example
// operator (controller-runtime) publishes its metrics on a port the kit gives each of its processes;
// the same checks run with that evidence and without it must give the same verdicts, and every
// verdict says which evidence decided its scenario's waits.

let cluster: TestCluster;
let binary: string;

beforeAll(async () => {
  binary = exampleOperatorBinary();
  cluster = await startTestCluster("rc-queues");
});

afterAll(async () => {
  cluster?.client.close();
  await cluster?.provider.delete();
});

/** Checks whose scenarios wait in every way: convergence, a drift repair, a crash and a restart, a spec update. */
const CHECKS = [
  "drift/managed-field",
  "idempotency/crash-after-create",
  "status-stability/observed-generation",
];

/** The whole operator section (it replaces the example's): a mutant's variable, metrics or none. */
const operatorSection = (metrics: boolean, bug?: string) => ({
  operator: {
    command: [binary, "--leader-elect=false"],
    namespaced: { arg: "--watch-namespace" },
    env: bug ? { WEBAPP_BUG: bug } : {},
    ...(metrics ? { metrics: { args: ["--metrics-bind-address=127.0.0.1:{port}"] } } : {}),
  },
});

async function run(options: { metrics: boolean; bug?: string }): Promise<RunReport> {
  return runExampleOperator(cluster, binary, {
    strict: true,
    suites: ["drift", "idempotency", "status-stability"],
    checks: CHECKS,
    contract: operatorSection(options.metrics, options.bug),
    workDir: await mkdtemp(join(tmpdir(), "rc-queues-run-")),
  });
}

/** The quiescence line of every scenario's verdict. */
const quiescenceLines = (report: RunReport) =>
  report.checks.flatMap((c) =>
    c.scenarios.map((s) => (s.evidence?.notes ?? []).find((n) => n.startsWith("quiescence: ")) ?? "(none)"),
  );

const statuses = (report: RunReport) => Object.fromEntries(report.checks.map((c) => [c.id, c.status]));

describe("quiescence from the operator's work queues", () => {
  it(
    "decides the reference's waits from its queues, with the verdicts silence gives",
    { timeout: 600_000 },
    async () => {
      const withQueues = await run({ metrics: true });
      const withoutQueues = await run({ metrics: false });
      expect(statuses(withQueues)).toEqual(Object.fromEntries(CHECKS.map((id) => [id, "passed"])));
      expect(statuses(withoutQueues)).toEqual(statuses(withQueues));

      const queued = quiescenceLines(withQueues);
      expect(queued.length).toBeGreaterThan(0);
      expect(queued).not.toContain("(none)");
      // Most waits are decided by the queues; a wait after a failed or requeued reconcile may fall back to silence.
      const byQueues = queued.filter((line) => /by the operator's work queues/.test(line));
      expect(byQueues.length).toBeGreaterThan(queued.length / 2);

      const silent = quiescenceLines(withoutQueues);
      expect(silent).not.toContain("(none)");
      for (const line of silent) {
        expect(line).toMatch(
          /^quiescence: \d+ wait\(s\) decided, \d+ by silence \(1\.5 s with no operator write\)$/,
        );
      }
    },
  );

  it(
    "leaves to silence the waits of an operator that asks to be requeued after a delay, saying why",
    { timeout: 300_000 },
    async () => {
      // The heartbeat variant returns RequeueAfter from every reconcile: its next reconcile is on a
      // timer the queues do not show, so silence decides, with the verdicts it gives without metrics.
      const report = await run({ metrics: true, bug: "heartbeat" });
      expect(statuses(report)).toEqual(statuses(await run({ metrics: false, bug: "heartbeat" })));
      const lines = quiescenceLines(report);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        expect(line).toMatch(/by silence/);
        expect(line).not.toMatch(/by the operator's work queues/);
      }
      expect(lines.join("\n")).toMatch(
        /the queues could not tell: the operator's last reconcile\(s\) ended in an error or asked to be requeued/,
      );
    },
  );
});
