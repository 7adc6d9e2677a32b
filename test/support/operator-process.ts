import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isProcessAlive } from "../../src/process/process-table.js";
import { pollUntil } from "../../src/util/poll.js";

const repoRoot = join(import.meta.dirname, "../..");

/** The example operator's binary, built (or found current) by its build script. */
export function exampleOperatorBinary(): string {
  const output = execFileSync("bash", [join(repoRoot, "examples/webapp-operator/build.sh")], {
    encoding: "utf8",
  });
  return output.trim().split("\n").at(-1) ?? "";
}

export interface OperatorProcess {
  readonly pid: number;
  /** Everything the operator printed so far. */
  log(): string;
  /** SIGTERM to its process group, SIGKILL after 10 s; resolves when it is gone. */
  stop(): Promise<void>;
}

/**
 * Runs an operator binary in its own process group with a kubeconfig, output
 * to a log file. A minimal launcher for tests of the example operator itself;
 * the kit's launcher (restart, crash, lease cleanup) lives in src/.
 */
export function startOperatorProcess(
  binary: string,
  args: string[],
  env: Record<string, string> = {},
): OperatorProcess {
  const logFile = join(mkdtempSync(join(tmpdir(), "rc-operator-")), "operator.log");
  const fd = openSync(logFile, "a");
  const child = spawn(binary, args, {
    detached: true,
    stdio: ["ignore", fd, fd],
    env: { ...process.env, ...env },
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${binary}`);
  let exited = false;
  child.on("exit", () => (exited = true));
  const gone = () => exited || !isProcessAlive(pid);
  return {
    pid,
    log: () => readFileSync(logFile, "utf8"),
    async stop() {
      if (gone()) return;
      process.kill(-pid, "SIGTERM");
      const stopped = await pollUntil(
        () => (gone() ? { done: true, value: true } : { done: false, reason: "running" }),
        {
          description: "the operator to exit",
          timeoutMs: 10_000,
          intervalMs: 50,
        },
      ).catch(() => false);
      if (!stopped) process.kill(-pid, "SIGKILL");
    },
  };
}
