import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/report/report-model.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import { runExampleOperator } from "../support/example-run.js";
import { exampleOperatorBinary } from "../support/webapp-example.js";

// generatedUpdates on the example operator: a contract whose only update scales it never changes
// the port, so the port-only-at-create mutant passes every authored comparison; the update the kit
// makes up from the CRD's schema for spec.port shows the bug, and the reference passes them all.

let cluster: TestCluster;
let binary: string;

beforeAll(async () => {
  binary = exampleOperatorBinary();
  cluster = await startTestCluster("rc-generated");
});

afterAll(async () => {
  cluster?.client.close();
  await cluster?.provider.delete();
});

const contract = { updates: [{ spec: { replicas: 2 } }], generatedUpdates: true };
const scenarios = (report: RunReport) =>
  Object.fromEntries(
    (report.checks.find((c) => c.id === "differential/update-equals-creation")?.scenarios ?? []).map((s) => [
      s.target,
      s.status,
    ]),
  );

describe("differential/update-equals-creation with generated updates", () => {
  it("the reference ends as a creation for every made-up update too", { timeout: 600_000 }, async () => {
    const report = await runExampleOperator(cluster, binary, {
      strict: true,
      suites: ["differential"],
      contract,
      parallel: 4,
    });
    expect(scenarios(report)).toEqual({
      "update 1": "passed",
      "generated update 2 (spec.replicas 2 → 3)": "passed",
      "generated update 3 (spec.port 8080 → 8081)": "passed",
      'generated update 4 (spec.image "registry.k8s.io/pause:3.10.1" → "registry.k8s.io/pause:3.10.1-updated")':
        "passed",
    });
  });

  it(
    "port-only-at-create fails only the made-up port change, and from it on",
    { timeout: 600_000 },
    async () => {
      const report = await runExampleOperator(cluster, binary, {
        bug: "port-only-at-create",
        strict: true,
        suites: ["differential"],
        contract,
        parallel: 4,
      });
      // Update 1 and the made-up replicas change never touch the port: as the reference. From the
      // port change on, the updated Deployment keeps containerPort 8080 where a creation has 8081.
      expect(scenarios(report)).toMatchObject({
        "update 1": "passed",
        "generated update 2 (spec.replicas 2 → 3)": "passed",
        "generated update 3 (spec.port 8080 → 8081)": "failed",
        'generated update 4 (spec.image "registry.k8s.io/pause:3.10.1" → "registry.k8s.io/pause:3.10.1-updated")':
          "failed",
      });
      const port = report.checks
        .find((c) => c.id === "differential/update-equals-creation")
        ?.scenarios.find((s) => s.target === "generated update 3 (spec.port 8080 → 8081)");
      expect(port?.message).toMatch(
        /^created with generated update 3 \(spec\.port 8080 → 8081\)'s spec, it ended unlike/,
      );
      expect(port?.evidence?.diffs).toEqual(
        expect.arrayContaining([expect.objectContaining({ expected: 8080, actual: 8081 })]),
      );
    },
  );
});

describe("the API server's dry run of every update, before it is written", () => {
  const verdicts = (report: RunReport) =>
    (report.checks.find((c) => c.id === "differential/update-equals-creation")?.scenarios ?? []).map((s) => ({
      target: s.target,
      status: s.status,
      message: s.message,
    }));

  it(
    "an update that changes nothing the server keeps leaves the check inconclusive, naming it",
    { timeout: 600_000 },
    async () => {
      // Update 2 names a field the schema does not have: pruned, it changes nothing.
      const report = await runExampleOperator(cluster, binary, {
        strict: true,
        suites: ["differential"],
        contract: { updates: [{ spec: { replicas: 2 } }, { spec: { replicaCount: 3 } }] },
        parallel: 4,
      });
      const [verdict, ...others] = verdicts(report);
      expect(others).toEqual([]);
      expect(verdict).toMatchObject({ target: "reference state", status: "inconclusive" });
      expect(verdict?.message).toMatch(
        /^the contract's update 2 changes nothing the API server keeps: its dry run answered the custom resource as it was/,
      );
    },
  );

  it("a refusal names the update and the server's reason", { timeout: 600_000 }, async () => {
    // Below the schema's minimum of 1.
    const report = await runExampleOperator(cluster, binary, {
      strict: true,
      suites: ["differential"],
      contract: { updates: [{ spec: { port: 0 } }] },
      parallel: 4,
    });
    const [verdict, ...others] = verdicts(report);
    expect(others).toEqual([]);
    expect(verdict).toMatchObject({ target: "reference state", status: "inconclusive" });
    expect(verdict?.message).toMatch(
      /^the API server refused the contract's update 1 in a dry run: .*spec\.port/,
    );
  });
});
