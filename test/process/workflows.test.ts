import { execFile } from "node:child_process";
import { access, copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";

// The workflows run on GitHub, not here: here they are linted by actionlint (which also checks the
// inputs and outputs of the local action, `uses: ./`, against action.yml) and read for what a
// linter does not know about this project.
const root = join(import.meta.dirname, "../..");
const cacheRoot =
  process.env.RECONCILE_CONFORMANCE_CACHE ||
  join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "reconcile-conformance");
const actionlint = join(cacheRoot, "tools/actionlint-v1.7.12/actionlint");
const run = promisify(execFile);
const scratch: string[] = [];

afterAll(async () => {
  for (const dir of scratch) await rm(dir, { recursive: true, force: true });
});

async function lint(cwd: string, files: string[]): Promise<{ code: number; output: string }> {
  await access(actionlint).catch(() => {
    throw new Error(`${actionlint} is missing: scripts/setup.sh builds it (hack/actionlint/build.sh)`);
  });
  try {
    const { stdout, stderr } = await run(actionlint, ["-no-color", ...files], { cwd });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

const workflowDir = join(root, ".github/workflows");

describe("the project's workflows", () => {
  it("pass actionlint", async () => {
    const files = (await readdir(workflowDir))
      .filter((f) => f.endsWith(".yml"))
      .map((f) => join(workflowDir, f));
    expect(files.length).toBeGreaterThanOrEqual(2);
    const result = await lint(root, files);
    expect(result.output).toBe("");
    expect(result.code).toBe(0);
  });

  it("self-test the action as users use it: local action, kind, both outcomes, a two-shard matrix and merge", async () => {
    const workflow = parse(await readFile(join(workflowDir, "self-test.yml"), "utf8")) as {
      jobs: Record<
        string,
        { needs?: string; strategy?: { matrix?: { shard?: number[] } }; steps: Record<string, unknown>[] }
      >;
    };
    const action = parse(await readFile(join(root, "action.yml"), "utf8")) as {
      inputs: Record<string, unknown>;
    };
    const local = Object.values(workflow.jobs).flatMap((job) => job.steps.filter((s) => s.uses === "./"));
    expect(local.length).toBeGreaterThanOrEqual(3);
    for (const step of local) {
      for (const input of Object.keys((step.with as Record<string, unknown> | undefined) ?? {})) {
        expect(Object.keys(action.inputs)).toContain(input);
      }
    }
    expect(workflow.jobs.sharded?.strategy?.matrix?.shard).toEqual([1, 2]);
    expect(workflow.jobs.merge?.needs).toBe("sharded");
    expect(JSON.stringify(workflow.jobs.merge?.steps)).toContain("dist/cli.js merge");
    expect(JSON.stringify(workflow.jobs.mutant?.steps)).toContain("WEBAPP_BUG");
    const deployed = JSON.stringify(workflow.jobs["deployed-mode"]?.steps);
    expect(deployed).toContain("docker build -t webapp-operator:ci examples/webapp-operator");
    expect(deployed).toContain("reconcile-conformance.deployed.yaml");
  });
});

describe("actionlint, as this project uses it", () => {
  it("rejects an input the local action does not declare (so the check above can fail)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rc-actionlint-"));
    scratch.push(dir);
    await mkdir(join(dir, ".git"));
    await mkdir(join(dir, "dist"));
    await mkdir(join(dir, ".github/workflows"), { recursive: true });
    await copyFile(join(root, "action.yml"), join(dir, "action.yml"));
    await writeFile(join(dir, "dist/index.js"), "");
    await writeFile(join(dir, "dist/post.js"), "");
    const workflow = join(dir, ".github/workflows/bad.yml");
    await writeFile(
      workflow,
      [
        "on: push",
        "jobs:",
        "  t:",
        "    runs-on: ubuntu-latest",
        "    steps:",
        "      - uses: ./",
        "        with:",
        "          no-such-input: x",
        "",
      ].join("\n"),
    );
    const result = await lint(dir, [workflow]);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('input "no-such-input" is not defined');
  });
});
