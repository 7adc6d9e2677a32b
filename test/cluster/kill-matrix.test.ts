import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadContract } from "../../src/contract/load-contract.js";
import { zxCommandRunner } from "../../src/process/command-runner.js";
import type { RunReport } from "../../src/report/report-model.js";
import { runKit, type ProgressReporter } from "../../src/runner/run-kit.js";
import { systemClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
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

const quiet: ProgressReporter = {
  phase: () => undefined,
  checkStarted: () => undefined,
  step: () => undefined,
  checkFinished: () => undefined,
};

async function run(bug: string | undefined): Promise<RunReport> {
  const dir = await mkdtemp(join(tmpdir(), "rc-matrix-"));
  const contract = parse(await readFile(join(exampleDir, "reconcile-conformance.yaml"), "utf8")) as Record<
    string,
    unknown
  >;
  const file = join(dir, "reconcile-conformance.yaml");
  await writeFile(
    file,
    stringify({
      ...contract,
      operator: { command: [binary, "--leader-elect=false"], env: bug ? { WEBAPP_BUG: bug } : {} },
      crds: [join(exampleDir, "crds/webapp.yaml")],
      sample: join(exampleDir, "samples/webapp.yaml"),
    }),
  );
  return runKit(
    {
      contract: await loadContract(file),
      cluster: {
        provider: "existing",
        kubeconfigPath: cluster.access.kubeconfigPath,
        context: cluster.access.context,
      },
      suites: ["drift", "status-stability"],
      strict: true,
      keep: false,
      workDir: join(dir, "work"),
    },
    {
      runner: zxCommandRunner,
      logger: silentLogger,
      signal: new AbortController().signal,
      clock: systemClock,
      progress: quiet,
    },
  );
}

/** "id=status: first message" for every check that did not pass, for a readable failure. */
const notPassed = (report: RunReport) =>
  report.checks
    .filter((c) => c.status !== "passed" && c.status !== "skipped")
    .map((c) => `${c.id}=${c.status}: ${c.scenarios.find((s) => s.status !== "passed")?.message ?? ""}`);

describe("kill matrix of the example operator (run --strict)", () => {
  it("the reference passes every check", { timeout: 300_000 }, async () => {
    const report = await run(undefined);
    expect(notPassed(report)).toEqual([]);
    expect(report.checks.map((c) => c.id)).toEqual([
      "cluster/optimistic-concurrency",
      "drift/managed-field",
      "drift/deleted-child",
      "status-stability/no-avoidable-writes",
      "status-stability/no-redundant-writes",
      "status-stability/last-transition-time",
      "status-stability/observed-generation",
    ]);
  });

  it.each(Object.entries(matrix.mutants))(
    "%s fails what it must, and nothing unexplained",
    { timeout: 600_000 },
    async (bug, expected) => {
      const report = await run(bug);
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
