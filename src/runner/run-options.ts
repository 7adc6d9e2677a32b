import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { parseClusterConfig, type ClusterEnvironment, type ClusterSettings } from "../cluster/index.js";
import {
  DEFAULT_EXPLORATION_SEED,
  DEFAULT_GENERATED_UPDATES,
  UPDATE_FAULT_LINES,
} from "../contract/contract-schema.js";
import { loadContract, type Contract } from "../contract/load-contract.js";
import { UsageError } from "../errors.js";
import type { ExplorationFlags } from "./run-exploration.js";
import { selectChecks, type RunConfig } from "./run-kit.js";
import { parseShard } from "./shard.js";
import { CLI_SETTINGS, type SettingNames } from "./setting-names.js";

/**
 * A run as a user asks for it, in plain values: what the CLI's flags and
 * the Action's inputs both map to, so the two front ends cannot drift apart
 * (one validation, one set of defaults, one set of error messages).
 */
export interface RunRequest {
  /** The contract file; default ./reconcile-conformance.yaml. */
  readonly config?: string;
  readonly cluster: ClusterSettings;
  /** Comma-separated lists are split. */
  readonly suites?: readonly string[];
  readonly checks?: readonly string[];
  /** Default ./reconcile-conformance-report. */
  readonly reportDir?: string;
  /** Also write the Markdown summary here. */
  readonly summaryFile?: string;
  readonly strict?: boolean;
  readonly keep?: boolean;
  /** As typed: a whole number >= 1. */
  readonly parallel?: string;
  /** As typed: "i/n". */
  readonly shard?: string;
  /** One scenario to run alone, by its id as the report names it: "<check id>#<target>". */
  readonly scenario?: string;
  /** As typed: at most this many generated updates (a whole number >= 0; 0: none), over the contract's. */
  readonly generatedUpdates?: string;
  /** As typed: the seed that orders generated updates (a whole number >= 0), over the contract's. */
  readonly seed?: string;
  /** As typed: which writes of each update's way get a fault (by-kind, all, none), over the contract's. */
  readonly updateFaults?: string;
}

/** A validated run: what runKit takes, and where its report goes. */
export interface PreparedRun {
  readonly config: RunConfig;
  readonly reportDir: string;
  readonly summaryFile?: string;
}

/**
 * Validates a request and reads its contract, before anything slow starts
 * (tools, clusters). Errors are UsageErrors naming the setting as the front
 * end spells it.
 */
export async function prepareRun(
  request: RunRequest,
  environment: ClusterEnvironment,
  names: SettingNames = CLI_SETTINGS,
): Promise<PreparedRun> {
  const contract = await loadContract(request.config ?? "reconcile-conformance.yaml", {
    setting: names.config,
    defaulted: request.config === undefined,
  });
  const cluster = parseClusterConfig(
    // A cluster of its own per run unless named: two runs side by side never share one.
    { ...request.cluster, name: request.cluster.name ?? `rc-run-${randomBytes(3).toString("hex")}` },
    environment,
    { prefix: names.prefix },
  );
  if (contract.operator.mode === "deployed" && cluster.provider !== "kind") {
    // Said before anything starts; prepareDeployedOperators says it again for runKit's other callers.
    throw new UsageError(
      "config/deploy-needs-kind",
      `${contract.file}: operator.deploy runs the operator in the cluster, which needs ${names.prefix}cluster kind (not ${cluster.provider}); use operator.command to run it as a local process instead`,
    );
  }
  const reportDir = resolve(request.reportDir ?? "reconcile-conformance-report");
  const parallel = request.parallel === undefined ? undefined : Number(request.parallel);
  if (parallel !== undefined && (!Number.isInteger(parallel) || parallel < 1)) {
    throw new UsageError(
      "cli/invalid-parallel",
      `${names.parallel} ${request.parallel}: expected a whole number >= 1`,
    );
  }
  const exploration = withExplorationFlags(contract, request, names);
  const shard = request.shard === undefined ? undefined : parseShard(request.shard, names.shard);
  if (shard !== undefined && request.scenario !== undefined) {
    throw new UsageError(
      "cli/scenario-and-shard",
      `${names.scenario} runs one scenario, ${names.shard} a share of them: give one of the two`,
    );
  }
  const suites = splitList(request.suites);
  const checks = splitList(request.checks);
  // Unknown suites and checks are refused here, not after a cluster has started.
  selectChecks(
    {
      contract,
      ...(suites.length > 0 ? { suites } : {}),
      ...(checks.length > 0 ? { checks } : {}),
      ...(request.scenario === undefined ? {} : { scenario: request.scenario }),
    },
    names,
  );
  return {
    config: {
      contract: exploration.contract,
      ...(exploration.flags ? { explorationFlags: exploration.flags } : {}),
      cluster,
      ...(suites.length > 0 ? { suites } : {}),
      ...(checks.length > 0 ? { checks } : {}),
      strict: request.strict ?? false,
      keep: request.keep ?? false,
      ...(parallel === undefined ? {} : { parallel }),
      ...(shard === undefined ? {} : { shard }),
      ...(request.scenario === undefined ? {} : { scenario: request.scenario }),
      workDir: resolve(reportDir, "scenarios"),
      clusterLogsDir: resolve(reportDir, "cluster-logs"),
    },
    reportDir,
    ...(request.summaryFile ? { summaryFile: resolve(request.summaryFile) } : {}),
  };
}

/**
 * The contract with its exploration as the request overrides it
 * (--generated-updates, --seed), and the overrides, for a rerun command to
 * repeat: the same budget and seed choose the same generated updates.
 */
function withExplorationFlags(
  contract: Contract,
  request: RunRequest,
  names: SettingNames,
): { readonly contract: Contract; readonly flags?: ExplorationFlags } {
  const whole = (typed: string | undefined, name: string) => {
    if (typed === undefined) return undefined;
    const n = Number(typed);
    if (typed.trim() === "" || !Number.isInteger(n) || n < 0) {
      throw new UsageError("cli/invalid-number", `${name} ${typed}: expected a whole number >= 0`);
    }
    return n;
  };
  const max = whole(request.generatedUpdates, names.generatedUpdates);
  const seed = whole(request.seed, names.seed);
  const lines = request.updateFaults?.trim();
  if (lines !== undefined && !(UPDATE_FAULT_LINES as readonly string[]).includes(lines)) {
    throw new UsageError(
      "cli/invalid-update-faults",
      `${names.updateFaults} ${request.updateFaults}: expected one of ${UPDATE_FAULT_LINES.join(", ")}`,
    );
  }
  const updateFaults = UPDATE_FAULT_LINES.find((l) => l === lines);
  if (max === undefined && seed === undefined && updateFaults === undefined) return { contract };
  const flags = {
    ...(max === undefined ? {} : { max }),
    ...(seed === undefined ? {} : { seed }),
    ...(updateFaults === undefined ? {} : { updateFaults }),
  };
  const { exploration: _own, ...withoutExploration } = contract;
  const rest =
    updateFaults === undefined
      ? withoutExploration
      : { ...withoutExploration, updateFaults: { ...contract.updateFaults, lines: updateFaults } };
  if (max === undefined && seed === undefined)
    return {
      contract: { ...rest, ...(contract.exploration ? { exploration: contract.exploration } : {}) },
      flags,
    };
  const resolved = {
    max: max ?? contract.exploration?.max ?? DEFAULT_GENERATED_UPDATES,
    seed: seed ?? contract.exploration?.seed ?? DEFAULT_EXPLORATION_SEED,
  };
  // A seed alone does not turn on what the contract turned off; a budget does.
  const on = resolved.max > 0 && (max !== undefined || contract.exploration !== undefined);
  return { contract: on ? { ...rest, exploration: resolved } : rest, flags };
}

/** "a,b" and ["a", "b,c"] alike; blanks dropped. */
function splitList(values: readonly string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean);
}
