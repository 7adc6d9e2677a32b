import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/report/report-model.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import { runExampleOperator } from "../support/example-run.js";
import { exampleOperatorBinary } from "../support/webapp-example.js";

// runKit end to end on the bundled example operator, against one real kwok
// cluster (provider existing): the reference passes every check, and each
// mutant fails exactly the checks its seeded bug breaks (the table in
// examples/webapp-operator/README.md), with evidence that shows why.

let cluster: TestCluster;
let binary: string;

beforeAll(async () => {
  binary = exampleOperatorBinary();
  cluster = await startTestCluster("rc-run");
});

afterAll(async () => {
  cluster?.client.close();
  await cluster?.provider.delete();
});

const verdicts = (report: RunReport) => Object.fromEntries(report.checks.map((c) => [c.id, c.status]));

describe("runKit on the example operator", () => {
  it("the reference passes every check", async () => {
    const report = await runExampleOperator(cluster, binary, { strict: true, suites: ["status-stability"] });
    expect(verdicts(report)).toEqual({
      "cluster/optimistic-concurrency": "passed",
      "status-stability/no-avoidable-writes": "passed",
      "status-stability/no-redundant-writes": "passed",
      "status-stability/last-transition-time": "passed",
      "status-stability/observed-generation": "passed",
      "status-stability/held-unavailable": "passed",
    });
    expect(report).toMatchObject({
      apiVersion: "reconcile-conformance.dev/v1alpha1",
      kind: "Report",
      status: "passed",
      cluster: { provider: "existing" },
    });
  });

  it("status-every-reconcile: changes status on every reconcile and restamps lastTransitionTime", async () => {
    const report = await runExampleOperator(cluster, binary, {
      bug: "status-every-reconcile",
      strict: true,
      suites: ["status-stability"],
    });
    expect(verdicts(report)).toMatchObject({
      "status-stability/no-avoidable-writes": "failed",
      "status-stability/no-redundant-writes": "failed",
      "status-stability/last-transition-time": "failed",
      "status-stability/observed-generation": "passed",
    });
    const avoidable = report.checks.find((c) => c.id === "status-stability/no-avoidable-writes");
    expect(avoidable?.scenarios[0]?.evidence?.writes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          effect: "changed",
          write: expect.stringMatching(/^update webapps\..*\/status$/) as unknown,
        }),
      ]),
    );
    const ltt = report.checks.find((c) => c.id === "status-stability/last-transition-time");
    // Its status writes restamp Ready with the time and keep its status: the write log shows it
    // from the sample's convergence on, write by write.
    expect(ltt?.scenarios[0]?.message).toMatch(
      /^\d+ operator write\(s\) gave condition\(s\) Ready a new lastTransitionTime and left their status as it was$/,
    );
    expect(ltt?.scenarios[0]?.evidence?.writes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          write: expect.stringMatching(/^update webapps\..*\/status$/) as unknown,
          changed: expect.arrayContaining(["status.conditions[type=Ready].lastTransitionTime"]) as unknown,
        }),
      ]),
    );
    expect(report.status).toBe("failed");
  });

  it("deep-equal-update: its updates change nothing (no-ops), so only the SHOULD check warns", async () => {
    const report = await runExampleOperator(cluster, binary, {
      bug: "deep-equal-update",
      strict: false,
      suites: ["status-stability"],
    });
    expect(verdicts(report)).toMatchObject({
      "status-stability/no-avoidable-writes": "passed",
      "status-stability/no-redundant-writes": "warned",
      "status-stability/last-transition-time": "passed",
    });
    const redundant = report.checks.find((c) => c.id === "status-stability/no-redundant-writes");
    const writes = (redundant?.scenarios[0]?.evidence?.writes ?? []) as { effect: string; write: string }[];
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.every((w) => w.effect === "no-op" && w.write.startsWith("update deployments.apps/"))).toBe(
      true,
    );
    expect(report.status).toBe("warned");
  });

  it("timestamp-in-template: rolls its Deployment on every reconcile; its Ready flips are real transitions", async () => {
    const report = await runExampleOperator(cluster, binary, {
      bug: "timestamp-in-template",
      strict: false,
      suites: ["status-stability"],
    });
    expect(verdicts(report)).toMatchObject({
      "status-stability/no-avoidable-writes": "failed",
      "status-stability/last-transition-time": "passed",
    });
    const avoidable = report.checks.find((c) => c.id === "status-stability/no-avoidable-writes");
    expect(avoidable?.scenarios[0]?.message).toMatch(/Deployment\/hello: metadata\.generation moved/);
  });
});
