import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isNotFound } from "../../src/kube/api-errors.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import { runExampleOperator } from "../support/example-run.js";
import { exampleOperatorBinary } from "../support/webapp-example.js";

// The contract's fixtures on the example operator, against a real API server: a Service named as
// the operator names its own (so the operator finds it there before the sample, adopts it and
// repairs it: a fixture the operator changes) and a cluster-scoped PriorityClass.

let cluster: TestCluster;
let binary: string;

beforeAll(async () => {
  binary = exampleOperatorBinary();
  cluster = await startTestCluster("rc-fixtures");
});

afterAll(async () => {
  cluster?.client.close();
  await cluster?.provider.delete();
});

const PRIORITY_CLASS = "rc-fixture-test";

describe("fixtures", () => {
  it(
    "are there before the sample in every scenario, never children, and a change to one is reported",
    { timeout: 600_000 },
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "rc-fixtures-"));
      const file = join(dir, "fixtures.yaml");
      await writeFile(
        file,
        [
          {
            apiVersion: "v1",
            kind: "Service",
            metadata: { name: "hello" },
            spec: { selector: { app: "other" }, ports: [{ port: 1234 }] },
          },
          {
            apiVersion: "scheduling.k8s.io/v1",
            kind: "PriorityClass",
            metadata: { name: PRIORITY_CLASS },
            value: 1000,
          },
        ]
          .map((o) => stringify(o))
          .join("---\n"),
      );
      const report = await runExampleOperator(cluster, binary, {
        strict: true,
        suites: ["drift"],
        contract: { fixtures: [file] },
      });
      const scenarios = report.checks.flatMap((c) => c.scenarios.map((s) => ({ check: c.id, ...s })));
      expect(scenarios.length).toBeGreaterThan(3);
      // The operator adopted the Service it found and made it its own (selector, ports): every drift
      // scenario says so. The Service is the user's, so no scenario drifts or deletes it.
      for (const scenario of scenarios.filter((s) => s.check.startsWith("drift/"))) {
        expect(scenario.target).not.toMatch(/^Service\//);
        expect(scenario.evidence?.notes?.join("\n")).toMatch(
          /the operator changed fixture Service\/hello \(write \d+: update\) \(.*spec\.selector.*\)/,
        );
      }
      expect(scenarios.map((s) => s.status)).toEqual(scenarios.map(() => "passed"));
      // The cluster-scoped one was made once and is gone with the run.
      const left = await cluster.client
        .get({ apiVersion: "scheduling.k8s.io/v1", kind: "PriorityClass", name: PRIORITY_CLASS })
        .then(
          () => "still there",
          (error: unknown) => (isNotFound(error) ? "gone" : String(error)),
        );
      expect(left).toBe("gone");
    },
  );
});
