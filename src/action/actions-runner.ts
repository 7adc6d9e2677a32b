import { getExecOutput } from "@actions/exec";
import type { CommandResult, CommandRunner, RunOptions } from "../process/command-runner.js";

/**
 * The Action's command runner, on @actions/exec: every command the kit runs
 * (kind, kwokctl, kubectl) appears in the job log as `[command]…` with its
 * output, as Actions users expect. @actions/exec cannot kill what it
 * started, so a timeout or an abort ends the wait, not the command: the
 * caller's cleanup (cluster delete) and the post step's `clean` remove what
 * the command left.
 */
export const actionsCommandRunner: CommandRunner = {
  async run([command, ...args], options: RunOptions = {}): Promise<CommandResult> {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries({ ...process.env, ...options.env })) {
      if (value !== undefined) env[key] = value;
    }
    const execution = getExecOutput(command, args, {
      env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ignoreReturnCode: true,
      ...(options.onStderrLine ? { listeners: { errline: options.onStderrLine } } : {}),
    }).then(
      (output): CommandResult => ({
        exitCode: output.exitCode,
        stdout: output.stdout,
        stderr: output.stderr,
      }),
      // A command that cannot start (not found) is data too, as it is for the CLI's runner.
      (error: unknown): CommandResult => ({
        exitCode: null,
        stdout: "",
        stderr: error instanceof Error ? error.message : String(error),
      }),
    );
    return Promise.race([execution, ended(command, options)]);
  },
};

/** Resolves when the command's time is up or the run is aborted; never, when neither is set. */
function ended(command: string, options: RunOptions): Promise<CommandResult> {
  return new Promise((resolve) => {
    const give = (why: string) => resolve({ exitCode: null, stdout: "", stderr: `${command}: ${why}` });
    if (options.timeoutMs !== undefined) {
      setTimeout(() => give(`no answer within ${options.timeoutMs} ms`), options.timeoutMs).unref();
    }
    if (options.signal) {
      if (options.signal.aborted) give("aborted");
      else options.signal.addEventListener("abort", () => give("aborted"), { once: true });
    }
  });
}
