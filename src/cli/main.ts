import { describeError, ExitCode, exitCodeOf, InfrastructureError, UsageError } from "../errors.js";
import type { CommandRunner } from "../process/command-runner.js";
import type { ClusterEnvironment } from "../cluster/cluster-config.js";
import { consoleLogger, type Logger } from "../util/logger.js";
import { parseFlags } from "./arguments.js";
import { binariesFlag, clusterCreate, clusterDelete, clusterFlags } from "./cluster-commands.js";
import { doctor } from "./doctor.js";
import { cleanCommand } from "./clean-command.js";
import { initCommand } from "./init-command.js";
import { mergeCommand } from "./merge-command.js";
import { runCommand } from "./run-command.js";
import { VERSION } from "../version.js";

/** Everything the CLI touches outside itself; the entry file passes the real ones. */
export interface CliDeps {
  readonly runner: CommandRunner;
  readonly environment: ClusterEnvironment;
  /** Results scripts read (kubeconfig path, doctor table). Progress goes to the logger. */
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  /** Fires on Ctrl-C / SIGTERM. */
  readonly signal: AbortSignal;
}

export interface CommandContext extends CliDeps {
  readonly logger: Logger;
}

const USAGE = `reconcile-conformance ${VERSION}: tests that a Kubernetes operator's reconcile loop is safe to run again.

Usage:
  reconcile-conformance init [--dir D] [--crds DIR] [--sample FILE] [--output F] [--command "..."]
                             [--schema URL] [--no-build]
      Write a starter contract for the operator in D (default .) to F (default
      D/reconcile-conformance.yaml; never overwritten). Finds the kubebuilder layout:
      config/crd/bases (CRDs), config/samples (a sample of a kind they serve), cmd/main.go
      or main.go (run with \`go run\`; its namespace flag or WATCH_NAMESPACE sets
      operator.namespaced), the variables its code reads. --command gives the operator's
      command line instead. A \`go run\` operator is built once (--no-build skips it) and
      startTimeout set from the time it took.
  reconcile-conformance run [--config F] [--cluster kwok|kind|existing] [--suite a,b] [--check ID]
                            [--report-dir D] [--summary F] [--strict] [--keep] [--parallel N]
                            [--shard i/n] [--scenario ID] [--binaries auto|download|build]
                            [--generated-updates N] [--seed N] [--update-faults by-kind|all|none]
      Run the contract's conformance checks on the operator (default contract:
      ./reconcile-conformance.yaml). Report files in --report-dir (default
      ./reconcile-conformance-report): report.json, junit.xml, summary.md (Markdown,
      also written to --summary F), and per scenario its write log and operator logs.
      --strict makes SHOULD checks fail the run; --keep leaves the cluster and the
      namespaces of a run that did not pass for inspection; --parallel N runs up to N
      scenarios side by side (default 4 when the contract sets operator.namespaced,
      which it needs; otherwise 1); --shard i/n runs the i-th of n deterministic shares
      of the scenarios (one per job of a workflow matrix; join them with merge);
      --scenario "<check id>#<target>" runs that one scenario alone (every scenario that
      did not pass prints the command that reruns it, with --keep); --generated-updates N
      makes at most N updates up from the CRD's schema for the differential check (0: none;
      default the contract's generatedUpdates, 8) and --seed N orders them (the same seed,
      the same choice); --update-faults chooses which writes on the way to each update
      get a crash, besides every write of the sample's creation (default the contract's
      updateFaults.lines, by-kind: the first of each kind of write, status writes left out;
      all; none).
  reconcile-conformance merge [--report-dir D] [--summary F] REPORT.json...
      Join the report.json of every shard of a run into one verdict (the same files).
  reconcile-conformance cluster create [--provider kwok|kind|existing] [--name NAME] [options]
      Start a cluster and print the path of its kubeconfig as the last line of stdout.
  reconcile-conformance cluster delete [--provider kwok|kind] [--name NAME]
      Stop a cluster the kit created and remove its files.
  reconcile-conformance clean [--all] [--dry-run]
      Remove what kits that died before cleaning up left running: clusters and operator
      processes whose owning kit process is gone (every run says at its start when it
      finds some). --all removes every cluster and operator of the kit in this cache,
      also those of kits still running; --dry-run only lists.
  reconcile-conformance doctor [--binaries auto|download|build] [--bin-dir D]
      Show what is installed, what is missing and how to get it; for the Kubernetes
      binaries, whether the next run uses, downloads or builds them, and why.

Cluster options:
  --provider P     kwok (default: local processes, no Docker), kind (Docker), existing (a kubeconfig)
  --name N         cluster name (default: reconcile-conformance)
  --bin-dir D      kwok: directory with the Kubernetes binaries (default: the build cache)
  --binaries M     kwok: how to get them when missing: auto (download the pinned releases,
                   checked against their SHA-256; build from Go modules only when the sites
                   are unreachable), download, build (env RECONCILE_CONFORMANCE_BINARIES)
  --node-image I   kind: node image
  --kubeconfig F   kind: where to write the kubeconfig; existing: which kubeconfig to use
  --context C      existing: kubeconfig context (default: current-context)
  --verbose        show the output of the tools the kit runs

Exit codes: 0 success, 1 conformance violations, 2 bad usage or contract, 3 infrastructure
failure or an inconclusive verdict.
`;

/** Runs one CLI invocation and returns its exit code. Never calls process.exit. */
export async function main(args: string[], deps: CliDeps): Promise<ExitCode> {
  const verbose = args.includes("--verbose");
  const logger = consoleLogger({ verbose, stream: deps.stderr });
  const context: CommandContext = { ...deps, logger };
  try {
    const [command, subcommand, ...rest] = args;
    // `run --help` too: the usage error of every command points there.
    const help = command === "help" || args.includes("--help") || args.includes("-h");
    if (command === undefined || help) {
      deps.stdout.write(USAGE);
      return command === undefined ? ExitCode.usage : ExitCode.ok;
    }
    if (command === "--version") {
      deps.stdout.write(`${VERSION}\n`);
      return ExitCode.ok;
    }
    if (command === "run") return await runCommand(args.slice(1), context);
    if (command === "merge") return await mergeCommand(args.slice(1), context);
    if (command === "init") return await initCommand(args.slice(1), context);
    if (command === "clean") return await cleanCommand(args.slice(1), context);
    if (command === "cluster") {
      if (subcommand === "create") return await clusterCreate(rest, context);
      if (subcommand === "delete") return await clusterDelete(rest, context);
      throw new UsageError(
        "cli/unknown-command",
        `cluster: unknown subcommand "${subcommand ?? ""}": use "cluster create" or "cluster delete"`,
      );
    }
    if (command === "doctor") {
      const { values } = parseFlags(
        args.slice(1),
        { verbose: clusterFlags.verbose, "bin-dir": clusterFlags["bin-dir"], ...binariesFlag },
        "doctor",
      );
      return await doctor(context, {
        ...(values["bin-dir"] === undefined ? {} : { binDir: values["bin-dir"] }),
        ...(values.binaries === undefined ? {} : { binaries: values.binaries }),
      });
    }
    throw new UsageError(
      "cli/unknown-command",
      `unknown command "${command}". Run reconcile-conformance --help`,
    );
  } catch (error) {
    report(error, logger);
    return exitCodeOf(error);
  }
}

function report(error: unknown, logger: Logger): void {
  logger.info(`error: ${describeError(error)}`);
  if (error instanceof InfrastructureError && error.details.length > 0) {
    logger.info("evidence:");
    for (const line of error.details) logger.info(`  ${line}`);
  }
  if (
    !(error instanceof UsageError || error instanceof InfrastructureError) &&
    error instanceof Error &&
    error.stack
  ) {
    logger.debug(error.stack);
  }
}
