import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { kwokWorkDir, processEnvironment } from "../../src/cluster/cluster-config.js";
import { REMOVED_TOKEN } from "../../src/proxy/operator-kubeconfig.js";

// The repository's own self-test workflow, the file users read, run by a real runner: act in its
// container-free mode (hack/act/run-workflow.sh), on its kwok matrix entries. act reads
// action.yml, runs dist/index.js and dist/post.js with the runner's files for outputs, state and
// the step summary, and the workflow's own steps check the outcomes (the reference passes, the
// mutant fails, the shards merge). This file checks what the workflow's steps cannot see.
const root = join(import.meta.dirname, "../..");

interface ActRun {
  readonly code: number | null;
  readonly output: string;
  /** act's whole output, one line each, after a time stamp. */
  readonly log: string[];
  readonly runDir: string;
}

let run: ActRun;

async function actRun(args: string[]): Promise<ActRun> {
  const runDir = await mkdtemp(join(tmpdir(), "rc-act-"));
  return new Promise((resolve, reject) => {
    const child = spawn("bash", [join(root, "hack/act/run-workflow.sh"), ...args], {
      cwd: root,
      env: { ...process.env, ACT_RUN_DIR: runDir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      readFile(join(runDir, "act.log"), "utf8").then(
        (text) => resolve({ code, output, log: text.split("\n"), runDir }),
        reject,
      );
    });
  });
}

/** The lines of one job (act's prefix "[self-test/<job>   ]"). */
function jobLines(job: string): string[] {
  return run.log.filter((line) => new RegExp(`^\\d+ \\[self-test/${job} *\\]`).test(line));
}

/** That a line of the job's log holds `text`. */
function expectLogged(job: string, text: string): void {
  expect(
    jobLines(job).some((l) => l.includes(text)),
    `${job}: ${text}`,
  ).toBe(true);
}

/** The outputs a job's `uses: ./` step set, as act prints them. */
function outputs(job: string): Record<string, string> {
  const set: Record<string, string> = {};
  for (const line of jobLines(job)) {
    const match = /::set-output:: ([a-z-]+)=(.*)$/.exec(line);
    if (match) set[match[1] ?? ""] = match[2] ?? "";
  }
  return set;
}

beforeAll(async () => {
  run = await actRun([".github/workflows/self-test.yml", "--matrix", "cluster:kwok"]);
}, 900_000);

describe("self-test.yml under act, kwok entries", () => {
  it("runs every kwok job to success, and leaves deployed mode (kind only) out", () => {
    expect(run.code, run.output).toBe(0);
    for (const job of ["process-mode", "mutant", "sharded-1", "sharded-2", "merge"]) {
      expectLogged(job, "🧪  Matrix: map[cluster:kwok");
      expectLogged(job, "🏁  Job succeeded");
    }
    expect(jobLines("deployed-mode")).toEqual([]);
  });

  it("sets the outputs: the reference passed every check, the mutant failed one", () => {
    expect(outputs("process-mode")).toMatchObject({ result: "passed", failed: "0", inconclusive: "0" });
    expect(Number(outputs("process-mode").passed)).toBeGreaterThan(10);
    expect(outputs("mutant")).toMatchObject({ result: "failed", failed: "1" });
  });

  it("annotates the mutant's failed MUST check on the update it was met in, and warns that fail-on-violation let the step pass", async () => {
    const lines = jobLines("mutant");
    // The conflict is injected while the operator converges the contract's first update.
    const contract = (
      await readFile(join(root, "examples/webapp-operator/reconcile-conformance.yaml"), "utf8")
    ).split("\n");
    const firstUpdate = contract.indexOf("updates:") + 2;
    expect(
      lines.some((l) =>
        new RegExp(
          `::error title=conflict/child-update \\(MUST\\) failed%3A \\d+ scenario\\(s\\),file=examples/webapp-operator/reconcile-conformance\\.yaml,line=${firstUpdate}::`,
        ).test(l),
      ),
      lines.filter((l) => l.includes("::error")).join("\n"),
    ).toBe(true);
    expect(lines.some((l) => l.includes("(fail-on-violation is false: the step passes)"))).toBe(true);
  });

  it("runs the post step after each main step, which finds nothing left: the main step cleaned up", () => {
    for (const job of ["process-mode", "mutant", "sharded-1", "sharded-2"]) {
      expectLogged(job, "reconcile-conformance: removing what the main step");
      expectLogged(job, "nothing left over: no kit that is gone left anything running");
    }
  });

  it("merges the two shards into one verdict on every check, named from the workspace, linked to the docs of the version that ran", async () => {
    const merge = jobLines("merge").join("\n");
    expect(merge).toMatch(/merged 2 shard report\(s\)/);
    expect(merge).toMatch(/PASS: \d+ passed, 0 failed/);
    // The shards' summaries are in the artifact store, as the runner's upload step left them.
    const shard = await readFile(join(run.runDir, "artifacts", "shard-kwok-1", "summary.md"), "utf8");
    expect(shard).toContain("**Contract:** <code>examples/webapp-operator/reconcile-conformance.yaml</code>");
    const report = JSON.parse(
      await readFile(join(run.runDir, "artifacts", "shard-kwok-2", "report.json"), "utf8"),
    ) as { contract: string; docsBaseUrl?: string };
    expect(report.contract).toBe("examples/webapp-operator/reconcile-conformance.yaml");
    expect(report.docsBaseUrl).toMatch(/\/reconcile-conformance\/reconcile-conformance\/blob\/[0-9a-f]{40}$/);
  });

  it("uploads the report artifact without the proxy's token", async () => {
    const reportDir = join(run.runDir, "artifacts", "process-mode-kwok-report");
    const files = (await readdir(reportDir, { recursive: true })).filter((f) =>
      f.endsWith("operator.kubeconfig"),
    );
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(await readFile(join(reportDir, file), "utf8")).toContain(REMOVED_TOKEN);
  });

  it("leaves no kwok cluster behind", async () => {
    const names = new Set(
      run.log.flatMap((l) => [...l.matchAll(/\brc-run-[0-9a-f]{6}\b/g)].map((m) => m[0])),
    );
    expect(names.size).toBeGreaterThanOrEqual(4);
    const clusters = await readdir(join(kwokWorkDir(processEnvironment()), "clusters")).catch(() => []);
    expect(clusters.filter((c) => names.has(c))).toEqual([]);
  });
});
