import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { UsageError } from "../../../src/errors.js";
import { prepareRun } from "../../../src/runner/run-options.js";
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
      {
        prefix: "input ",
        parallel: "input parallel",
        shard: "input shard",
      },
    ).catch((e: unknown) => e);
    expect((action as Error).message).toContain("needs input cluster kind (not existing)");
    const kind = await prepareRun({ config, cluster: { provider: "kind" } }, environment);
    expect(kind.config.contract.operator.mode).toBe("deployed");
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
