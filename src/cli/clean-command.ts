import { findLeftovers, removeLeftovers, type Leftover } from "../cleanup/leftovers.js";
import { describeError, ExitCode, UsageError } from "../errors.js";
import { parseFlags } from "./arguments.js";
import { clusterFlags } from "./cluster-commands.js";
import type { CommandContext } from "./main.js";

export const cleanFlags = {
  all: { type: "boolean" },
  "dry-run": { type: "boolean" },
  verbose: clusterFlags.verbose,
} as const;

/**
 * `clean`: removes what kits killed before they could clean up left
 * running (clusters, operator process groups), found by the ownership
 * records in the cache; `--all` removes every cluster and operator of the
 * kit in this cache, even those of kits still running; `--dry-run` only
 * lists. Each item on a line of stdout; exit 0 when everything listed is
 * gone (or there was nothing), 3 when something could not be removed.
 */
export async function cleanCommand(args: string[], context: CommandContext): Promise<ExitCode> {
  const { values, positionals } = parseFlags(args, cleanFlags, "clean");
  if (positionals.length > 0) {
    throw new UsageError("cli/unexpected-argument", `clean: unexpected argument "${positionals[0]}"`);
  }
  const all = values.all ?? false;
  const leftovers = await findLeftovers(context.environment, {
    all,
    onUnreadable: (path, error) =>
      context.logger.warn(`ignoring ${path}, which clean cannot read (${describeError(error)})`),
  });
  if (leftovers.length === 0) {
    context.logger.info(
      all
        ? "nothing of the kit in this cache"
        : "nothing left over: no kit that is gone left anything running",
    );
    return ExitCode.ok;
  }
  if (values["dry-run"]) {
    for (const leftover of leftovers) context.stdout.write(`would remove ${line(leftover)}\n`);
    return ExitCode.ok;
  }
  const outcomes = await removeLeftovers(context.environment, leftovers, {
    runner: context.runner,
    logger: context.logger,
    all,
  });
  let failed = 0;
  for (const outcome of outcomes) {
    switch (outcome.status) {
      case "removed":
        context.stdout.write(`removed ${line(outcome.leftover)}\n`);
        break;
      case "skipped":
        context.stdout.write(`left ${line(outcome.leftover)}: ${outcome.why}\n`);
        break;
      case "failed":
        failed++;
        context.stdout.write(`not removed ${line(outcome.leftover)}: ${describeError(outcome.error)}\n`);
        break;
    }
  }
  if (failed > 0) {
    context.logger.warn(`${failed} of ${outcomes.length} could not be removed; see above`);
    return ExitCode.infrastructure;
  }
  return ExitCode.ok;
}

function line(leftover: Leftover): string {
  return `${leftover.description} (${leftover.reason}; ${leftover.path})`;
}
