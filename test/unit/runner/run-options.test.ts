import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { UsageError } from "../../../src/errors.js";
import { prepareRun } from "../../../src/runner/run-options.js";
import { ACTION_SETTINGS, CLI_SETTINGS } from "../../../src/runner/setting-names.js";
import { exampleDir } from "../../support/webapp-example.js";

const environment = { env: { RECONCILE_CONFORMANCE_CACHE: "/cache" }, homeDir: "/home/u" };
const example = join(exampleDir, "reconcile-conformance.yaml");

async function deployedContract(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "rc-run-options-"));
  const file = join(dir, "reconcile-conformance.yaml");
  await writeFile(
    file,
    stringify({
      operator: { deploy: { image: "example.com/webapp:ci", manifests: "config/default" } },
      crds: [join(exampleDir, "crds/webapp.yaml")],
      sample: join(exampleDir, "samples/webapp.yaml"),
    }),
  );
  return file;
}

describe("prepareRun", () => {
  it("maps a request to the run: lists split, a cluster of its own, report paths under report-dir", async () => {
    const run = await prepareRun(
      {
        config: example,
        cluster: { provider: "kwok" },
        suites: ["drift, conflict"],
        checks: ["drift/managed-field", "conflict/child-update,drift/deleted-child"],
        reportDir: "/tmp/r",
        shard: "2/3",
        parallel: "2",
      },
      environment,
    );
    expect(run.config.suites).toEqual(["drift", "conflict"]);
    expect(run.config.checks).toEqual([
      "drift/managed-field",
      "conflict/child-update",
      "drift/deleted-child",
    ]);
    expect(run.config.shard).toEqual({ index: 2, count: 3 });
    expect(run.config.parallel).toBe(2);
    expect(run.config.cluster).toMatchObject({ provider: "kwok", workDir: "/cache/kwok" });
    expect(run.config.cluster.provider === "kwok" && run.config.cluster.name).toMatch(/^rc-run-[0-9a-f]{6}$/);
    expect(run).toMatchObject({ reportDir: "/tmp/r" });
    expect(run.config).toMatchObject({ workDir: "/tmp/r/scenarios", clusterLogsDir: "/tmp/r/cluster-logs" });
  });

  it("refuses a deployed operator on any cluster but kind before anything starts, naming the setting as the front end spells it", async () => {
    const config = await deployedContract();
    const cli = await prepareRun({ config, cluster: { provider: "kwok" } }, environment).catch(
      (e: unknown) => e,
    );
    expect(cli).toBeInstanceOf(UsageError);
    expect((cli as Error).message).toContain(
      "operator.deploy runs the operator in the cluster, which needs --cluster kind (not kwok)",
    );
    const action = await prepareRun(
      { config, cluster: { provider: "existing", kubeconfig: "/k" } },
      environment,
      ACTION_SETTINGS,
    ).catch((e: unknown) => e);
    expect((action as Error).message).toContain("needs input cluster kind (not existing)");
    const kind = await prepareRun({ config, cluster: { provider: "kind" } }, environment);
    expect(kind.config.contract.operator.mode).toBe("deployed");
  });

  it.each([
    [CLI_SETTINGS, { suites: ["nosuch"] }, '--suite: unknown suite "nosuch": use cluster, '],
    [ACTION_SETTINGS, { suites: ["nosuch"] }, 'input suites: unknown suite "nosuch": use cluster, '],
    [
      ACTION_SETTINGS,
      { checks: ["drift/nosuch"] },
      'input checks: unknown check "drift/nosuch": use one of ',
    ],
    [
      ACTION_SETTINGS,
      { config: "no-such-contract.yaml" },
      "input config no-such-contract.yaml: cannot read the contract: no such file or directory (ENOENT)",
    ],
  ])(
    "refuses a bad setting before anything starts, naming it as the front end spells it (%#)",
    async (names, request, message) => {
      const error = await prepareRun(
        { config: example, cluster: { provider: "kwok" }, ...request },
        environment,
        names,
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toContain(message);
    },
  );

  it("takes --update-faults over the contract's lines, keeps the exploration, and refuses any other value naming the setting", async () => {
    const run = await prepareRun(
      { config: example, cluster: { provider: "kwok" }, updateFaults: "all" },
      environment,
    );
    expect(run.config.contract.updateFaults).toEqual({ lines: "all", generatedUpdates: 1 });
    expect(run.config.contract.exploration).toEqual({ max: 8, seed: 1 });
    expect(run.config.explorationFlags).toEqual({ updateFaults: "all" });
    const plain = await prepareRun({ config: example, cluster: { provider: "kwok" } }, environment);
    expect(plain.config.contract.updateFaults).toEqual({ lines: "by-kind", generatedUpdates: 1 });
    expect(plain.config.explorationFlags).toBeUndefined();
    for (const [names, setting] of [
      [CLI_SETTINGS, "--update-faults"],
      [ACTION_SETTINGS, "input update-faults"],
    ] as const) {
      const refused = await prepareRun(
        { config: example, cluster: { provider: "kwok" }, updateFaults: "some" },
        environment,
        names,
      ).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(UsageError);
      expect((refused as UsageError).message).toBe(`${setting} some: expected one of by-kind, all, none`);
    }
  });

  it("says when the default contract is missing, and how to name or write one", async () => {
    const cwd = process.cwd();
    process.chdir(await mkdtemp(join(tmpdir(), "rc-no-contract-")));
    try {
      const error = await prepareRun({ cluster: { provider: "kwok" } }, environment, ACTION_SETTINGS).catch(
        (e: unknown) => e,
      );
      expect((error as Error).message).toBe(
        "no contract given, and the default reconcile-conformance.yaml cannot be read: no such file or directory (ENOENT); name the contract with input config, or write one with `npx reconcile-conformance init`",
      );
    } finally {
      process.chdir(cwd);
    }
  });

  it.each([
    [{ parallel: "0" }, "--parallel 0: expected a whole number >= 1"],
    [{ shard: "3/2" }, '--shard "3/2": expected i/n'],
  ])("refuses %j", async (request, message) => {
    const error = await prepareRun(
      { config: example, cluster: { provider: "kwok" }, ...request },
      environment,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain(message);
  });
});
