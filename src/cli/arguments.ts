import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "../errors.js";

type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

/**
 * parseArgs with errors that name the bad flag and say where to look, as a
 * UsageError (exit code 2) instead of a bare TypeError.
 */
export function parseFlags<T extends OptionSpec>(args: string[], options: T, command: string) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new UsageError(
      "cli/bad-flag",
      `${command}: ${message}. See: reconcile-conformance ${command} --help`,
    );
  }
}
