import { spawn } from "node:child_process";
import { join } from "node:path";

// These run the committed bundle, dist/cli.js, as a user would.
const CLI = join(import.meta.dirname, "../../dist/cli.js");

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `dist/cli.js` with the current Node; `interruptWhen` sends SIGINT once stderr satisfies it. */
export function runCli(
  args: string[],
  options: {
    interruptWhen?: (stderr: string) => boolean;
    /** Added to this process's environment. */
    env?: Readonly<Record<string, string>>;
  } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...options.env },
    });
    let stdout = "";
    let stderr = "";
    let interrupted = false;
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (!interrupted && options.interruptWhen?.(stderr)) {
        interrupted = true;
        child.kill("SIGINT");
      }
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
