import { Writable } from "node:stream";
import type { CommandContext } from "../../src/cli/main.js";
import type { ClusterEnvironment } from "../../src/cluster/cluster-config.js";
import type { CommandRunner } from "../../src/process/command-runner.js";
import { silentLogger, type Logger } from "../../src/util/logger.js";

// The CommandContext a command gets from main, built in the test: what the
// command writes is kept, and it runs commands only with a runner it is given.

/** A stream that keeps what is written to it. */
function capture(): { stream: Writable; text: () => string } {
  let text = "";
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

/** A runner for a command that must run nothing: whatever it is asked to run rejects with `message`. */
export function refusingRunner(message = "nothing should run"): CommandRunner {
  return { run: () => Promise.reject(new Error(message)) };
}

export interface ContextOptions {
  readonly environment: ClusterEnvironment;
  /** Default: a runner that refuses to run anything. */
  readonly runner?: CommandRunner;
  /** Default: silent. */
  readonly logger?: Logger;
}

/** A CommandContext with the given environment, whose stdout and stderr are kept. */
export function commandContext(options: ContextOptions): {
  context: CommandContext;
  stdout: () => string;
  stderr: () => string;
} {
  const stdout = capture();
  const stderr = capture();
  const context: CommandContext = {
    runner: options.runner ?? refusingRunner(),
    environment: options.environment,
    stdout: stdout.stream,
    stderr: stderr.stream,
    signal: new AbortController().signal,
    logger: options.logger ?? silentLogger,
  };
  return { context, stdout: stdout.text, stderr: stderr.text };
}

/** Runs `command` in a commandContext(options): its exit code, and what it wrote to stdout and stderr. */
export async function runInContext<Code>(
  command: (context: CommandContext) => Promise<Code>,
  options: ContextOptions,
): Promise<{ code: Code; stdout: string; stderr: string }> {
  const { context, stdout, stderr } = commandContext(options);
  const code = await command(context);
  return { code, stdout: stdout(), stderr: stderr() };
}
