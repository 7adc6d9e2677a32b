import { spawn } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";

// The Action's steps as the runner runs them: `node dist/index.js` (then `node dist/post.js`)
// with every input as INPUT_<NAME> (defaults included, as the runner passes them) and the
// runner's files for outputs, the job summary and the state kept between the two steps.
const root = join(import.meta.dirname, "../..");
const action = parse(await readFile(join(root, "action.yml"), "utf8")) as {
  inputs: Record<string, { default?: string }>;
};

export interface ActionJob {
  readonly dir: string;
  readonly env: Record<string, string>;
  readonly files: { readonly output: string; readonly summary: string; readonly state: string };
}

/**
 * A job's environment: inputs (action.yml's defaults overridden by `inputs`;
 * report-dir in the job's directory), runner files, and `env` for the step.
 */
export async function actionJob(
  inputs: Record<string, string>,
  env: Record<string, string> = {},
): Promise<ActionJob> {
  const dir = await mkdtemp(join(tmpdir(), "rc-action-job-"));
  const files = { output: join(dir, "output"), summary: join(dir, "summary.md"), state: join(dir, "state") };
  for (const file of Object.values(files)) await writeFile(file, "");
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && !entry[0].startsWith("INPUT_"),
    ),
  );
  const inputEnv: Record<string, string> = {};
  // The report goes into the job's own directory unless the test says otherwise.
  const given: Record<string, string> = { "report-dir": join(dir, "report"), ...inputs };
  for (const [name, spec] of Object.entries(action.inputs)) {
    inputEnv[`INPUT_${name.toUpperCase()}`] = given[name] ?? spec.default ?? "";
  }
  for (const name of Object.keys(inputs)) {
    if (!(name in action.inputs)) throw new Error(`action.yml has no input ${name}`);
  }
  return {
    dir,
    files,
    env: {
      ...inherited,
      ...inputEnv,
      GITHUB_ACTIONS: "true",
      GITHUB_WORKSPACE: root,
      GITHUB_OUTPUT: files.output,
      GITHUB_STEP_SUMMARY: files.summary,
      GITHUB_STATE: files.state,
      RUNNER_TEMP: join(dir, "runner-temp"),
      RUNNER_TOOL_CACHE: join(dir, "tool-cache"),
      ...env,
    },
  };
}

export interface StepRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs dist/<file> in the job's workspace. `killWhen` SIGKILLs the step once
 * its stdout satisfies it (a runner killing the main step).
 */
export function runStep(
  job: ActionJob,
  file: "index.js" | "post.js",
  options: {
    readonly killWhen?: (stdout: string) => boolean;
    readonly state?: Record<string, string>;
    /** Told the step's pid once it is spawned. */
    readonly started?: (pid: number) => void;
  } = {},
): Promise<StepRun> {
  const stateEnv = Object.fromEntries(Object.entries(options.state ?? {}).map(([k, v]) => [`STATE_${k}`, v]));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, "dist", file)], {
      cwd: root,
      env: { ...job.env, ...stateEnv },
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (child.pid !== undefined) options.started?.(child.pid);
    let stdout = "";
    let stderr = "";
    let killed = false;
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (!killed && options.killWhen?.(stdout)) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Reads a runner file of `name<<delimiter` / `name=value` entries (GITHUB_OUTPUT, GITHUB_STATE). */
export async function readFileCommands(path: string): Promise<Record<string, string>> {
  const lines = (await readFile(path, "utf8")).split("\n");
  const values: Record<string, string> = {};
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const [, name = "", delimiter] = heredoc;
      const body: string[] = [];
      for (i++; i < lines.length && lines[i] !== delimiter; i++) body.push(lines[i] ?? "");
      values[name] = body.join("\n");
    } else if (line.includes("=")) {
      values[line.slice(0, line.indexOf("="))] = line.slice(line.indexOf("=") + 1);
    }
  }
  return values;
}
