import { $ } from "zx";
import { access, constants } from "node:fs/promises";
import { delimiter, join } from "node:path";

/** Outcome of a finished command. A non-zero exit is data, not an exception. */
export interface CommandResult {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  /** Added to the inherited environment. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Kills the command when fired. */
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
  /** Each line of stderr as it arrives: progress of long steps. */
  readonly onStderrLine?: (line: string) => void;
}

/**
 * Runs external commands (kwokctl, kind, docker). Injected so that argument
 * construction can be tested without the commands installed.
 */
export interface CommandRunner {
  run(argv: readonly [string, ...string[]], options?: RunOptions): Promise<CommandResult>;
}

/** The real runner, on zx: one preset per call, never the global `$` mutated. */
export const zxCommandRunner: CommandRunner = {
  async run(argv, options = {}) {
    const shell = $({
      env: { ...process.env, ...options.env },
      cwd: options.cwd,
      signal: options.signal,
      timeout: options.timeoutMs === undefined ? undefined : `${options.timeoutMs}ms`,
      nothrow: true,
      quiet: true,
      verbose: false,
    });
    const child = shell`${argv}`;
    if (options.onStderrLine) {
      let pending = "";
      child.stderr.on("data", (chunk: Buffer) => {
        pending += chunk.toString("utf8");
        const lines = pending.split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) options.onStderrLine?.(line);
      });
    }
    const output = await child;
    return { exitCode: output.exitCode, stdout: output.stdout, stderr: output.stderr };
  },
};

/** Resolves a command name on PATH the way a shell would; undefined when absent. */
export async function findExecutable(
  name: string,
  path = process.env.PATH ?? "",
): Promise<string | undefined> {
  if (name.includes("/")) return (await isExecutable(name)) ? name : undefined;
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The last `count` non-empty lines of some output, for error evidence. */
export function tailLines(text: string, count: number): string[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .slice(-count);
}
