import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/report/report-model.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import { runExampleOperator } from "../support/example-run.js";
import { exampleDir, exampleOperatorBinary } from "../support/webapp-example.js";

// The kill matrix: `run --strict` on the reference (every check passes) and on
// each mutant listed in examples/webapp-operator/kill-matrix.yaml, which must
// fail the checks listed there and nothing else unless the file says why.

interface Matrix {
  readonly mutants: Record<
    string,
    { readonly mustFail: string[]; readonly alsoFails?: Record<string, string> }
  >;
}

const matrix = parse(await readFile(join(exampleDir, "kill-matrix.yaml"), "utf8")) as Matrix;
/** The suites the kit implements so far. */
const SUITES = ["drift", "status-stability", "idempotency"];

let cluster: TestCluster;
let binary: string;

beforeAll(async () => {
  binary = exampleOperatorBinary();
  cluster = await startTestCluster("rc-matrix");
});

afterAll(async () => {
  cluster?.client.close();
  await cluster?.provider.delete();
});

/** "id=status: first message" for every check that did not pass, for a readable failure. */
const notPassed = (report: RunReport) =>
  report.checks
    .filter((c) => c.status !== "passed" && c.status !== "skipped")
    .map((c) => `${c.id}=${c.status}: ${c.scenarios.find((s) => s.status !== "passed")?.message ?? ""}`);

describe("kill matrix of the example operator (run --strict)", () => {
  it("the reference passes every check", { timeout: 300_000 }, async () => {
    const report = await runExampleOperator(cluster, binary, {
      strict: true,
      suites: SUITES,
    });
    expect(notPassed(report)).toEqual([]);
    expect(report.checks.map((c) => c.id)).toEqual([
      "cluster/optimistic-concurrency",
      "drift/managed-field",
      "drift/deleted-child",
      "status-stability/no-avoidable-writes",
      "status-stability/no-redundant-writes",
      "status-stability/last-transition-time",
      "status-stability/observed-generation",
      "idempotency/crash-after-create",
      "idempotency/crash-after-write",
      "idempotency/preexisting-child",
      "idempotency/recreate-same-name",
    ]);
  });

  it.each(Object.entries(matrix.mutants))(
    "%s fails what it must, and nothing unexplained",
    { timeout: 600_000 },
    async (bug, expected) => {
      const report = await runExampleOperator(cluster, binary, {
        bug,
        strict: true,
        suites: SUITES,
      });
      const status = Object.fromEntries(report.checks.map((c) => [c.id, c.status]));
      for (const id of expected.mustFail) expect(`${id}=${status[id]}`).toBe(`${id}=failed`);
      const unexplained = notPassed(report).filter((line) => {
        const id = line.split("=")[0] ?? "";
        return !expected.mustFail.includes(id) && !(id in (expected.alsoFails ?? {}));
      });
      expect(unexplained).toEqual([]);
    },
  );
});
