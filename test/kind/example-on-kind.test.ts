import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { kindRecordDir, processEnvironment } from "../../src/cluster/cluster-config.js";
import type { RunReport } from "../../src/report/report-model.js";
import { kindClusters, requireKind, runToEnd } from "../support/kind.js";
import { exampleDir, exampleOperatorBinary } from "../support/webapp-example.js";

// The bundled example operator on kind, the Action's default cluster, where Pods really run: the
// whole default run in process mode (the operator on this machine, through the kit's proxy), and
// deployed mode (the operator's image loaded into the node, its Pod reaching the proxy at the kind
// network's gateway) with the whole idempotency suite, whose crashes delete the operator's Pod.
// Both through the committed bundle, as a user runs `npx reconcile-conformance run`.
const root = join(import.meta.dirname, "../..");
const CLI = join(root, "dist/cli.js");

async function run(
  args: string[],
): Promise<{ code: number | null; output: string; report: RunReport; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), "rc-kind-run-"));
  const result = await runToEnd(
    [process.execPath, CLI, "run", "--cluster", "kind", "--report-dir", dir, ...args],
    {
      cwd: root,
    },
  );
  const report = JSON.parse(await readFile(join(dir, "report.json"), "utf8")) as RunReport;
  return { code: result.code, output: result.stdout + result.stderr, report, dir };
}

/** Every verdict that is not a pass, for the assertion's message. */
function notPassed(report: RunReport): string {
  return report.checks
    .flatMap((c) =>
      c.scenarios
        .filter((s) => s.status !== "passed" && s.status !== "skipped")
        .map((s) => `${c.id}#${s.target}: ${s.status}: ${s.message}`),
    )
    .join("\n");
}

/** Nothing of a finished run stays: its cluster, its record, its kubeconfig. */
async function expectNothingLeft(report: RunReport): Promise<void> {
  const name = report.cluster.name ?? "";
  expect(await kindClusters()).not.toContain(name);
  const cache = join(kindRecordDir(processEnvironment()), "..");
  const files = await readdir(cache, { recursive: true }).catch(() => []);
  expect(files.filter((f) => f.includes(name))).toEqual([]);
}

/** An image FROM scratch holding one file: enough to load, nothing to run. */
async function scratchImage(tag: string) {
  const context = await mkdtemp(join(tmpdir(), "rc-operand-"));
  await writeFile(join(context, "operand"), "an operand image for the kind tests\n");
  await writeFile(join(context, "Dockerfile"), "FROM scratch\nCOPY operand /operand\n");
  return runToEnd(["docker", "build", "--quiet", "-t", tag, context], {
    env: { ...process.env, DOCKER_BUILDKIT: "0" },
  });
}

/** The example's deployed contract with `extra` fields, written elsewhere with its paths made absolute. */
async function deployedContractWith(extra: Record<string, unknown>): Promise<string> {
  const contract = parse(await readFile(join(exampleDir, "reconcile-conformance.deployed.yaml"), "utf8")) as {
    operator: { deploy: { manifests: string } };
    crds: string[];
    sample: string;
  };
  contract.operator.deploy.manifests = join(exampleDir, contract.operator.deploy.manifests);
  contract.crds = contract.crds.map((crd) => join(exampleDir, crd));
  contract.sample = join(exampleDir, contract.sample);
  const file = join(await mkdtemp(join(tmpdir(), "rc-kind-contract-")), "reconcile-conformance.yaml");
  await writeFile(file, stringify({ ...contract, ...extra }));
  return file;
}

beforeAll(async () => {
  await requireKind();
  exampleOperatorBinary();
});

describe("the example operator on kind", () => {
  it("passes the whole default run in process mode", async () => {
    const { code, output, report } = await run(["--config", join(exampleDir, "reconcile-conformance.yaml")]);
    expect(code, `${notPassed(report)}\n${output.slice(-4000)}`).toBe(0);
    expect(report.status).toBe("passed");
    expect(report.cluster.provider).toBe("kind");
    // The whole default run: every suite of the contract judged something.
    const suites = new Set(report.checks.filter((c) => c.status === "passed").map((c) => c.id.split("/")[0]));
    expect([...suites].sort()).toEqual([
      "cluster",
      "conflict",
      "deletion",
      "differential",
      "drift",
      "idempotency",
      "staleness",
      "status-stability",
    ]);
    await expectNothingLeft(report);
  }, 600_000); // a kind cluster and a whole run: minutes, not the default seconds

  it("passes the idempotency suite deployed from its image, crashes by Pod deletion included", async () => {
    // The image exists in Docker: scripts/test.sh builds it with hack/kind/operator-image.sh.
    const image = await runToEnd(["docker", "image", "inspect", "webapp-operator:ci"]);
    expect(image.code, "webapp-operator:ci is not in Docker: run hack/kind/operator-image.sh").toBe(0);
    // The deployed contract, with an operand image of its own to load (nothing runs it: the
    // sample's image is the pause image every node holds): `images` goes through kind load too.
    const operand = "rc-operand:ci";
    const built = await scratchImage(operand);
    expect(built.code, built.stderr).toBe(0);
    const { code, output, report } = await run([
      "--config",
      await deployedContractWith({ images: [operand] }),
      "--suite",
      "idempotency",
    ]);
    expect(output).toContain(`images: loading ${operand} into kind cluster ${report.cluster.name ?? ""}`);
    expect(code, `${notPassed(report)}\n${output.slice(-4000)}`).toBe(0);
    expect(report.status).toBe("passed");
    expect(output).toContain("operator.deploy: loading webapp-operator:ci into kind cluster");
    const idempotency = report.checks.filter((c) => c.id.startsWith("idempotency/"));
    expect(idempotency.map((c) => [c.id, c.status])).toEqual([
      ["idempotency/crash-after-create", "passed"],
      ["idempotency/crash-after-write", "passed"],
      ["idempotency/preexisting-child", "passed"],
      ["idempotency/recreate-same-name", "passed"],
      // Its clock makes nothing.
      ["idempotency/no-tick-overwrite", "skipped"],
    ]);
    await expectNothingLeft(report);
  }, 600_000); // a kind cluster and a whole run: minutes, not the default seconds
});
