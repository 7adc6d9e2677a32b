import { UsageError } from "../errors.js";
import { checkReport, type CheckReport } from "../report/report-model.js";
import { rerunCommand, withRerunCommands } from "../report/rerun.js";
import { waiveCheck } from "../report/waivers.js";
import type { CheckDefinition } from "../suites/check.js";
import type { RunConfig } from "./run-kit.js";
import { scenarioKey } from "./shard.js";
import type { ScenarioResult } from "./suite-runner.js";

/**
 * One check's report from its suite's scenario verdicts: the scenarios
 * `--scenario` asked for (a UsageError naming the ones the run has when it
 * has none), judged, waived where the contract says, with rerun commands.
 */
export function judgeCheck(
  check: CheckDefinition,
  results: readonly ScenarioResult[],
  run: { readonly config: RunConfig; readonly today: string; readonly durationMs: number },
): CheckReport {
  const { config, today, durationMs } = run;
  const own = results.filter((r) => r.check === check.id && !r.unselected && asked(config.scenario, r));
  if (config.scenario !== undefined && own.length === 0) {
    // A target the run does not have: say which it has rather than report a verdictless check.
    throw new UsageError(
      "cli/unknown-scenario",
      `--scenario ${JSON.stringify(config.scenario)}: this run has no such scenario; ${check.id} has: ${
        results
          .filter((r) => r.check === check.id)
          .map((r) => JSON.stringify(scenarioKey(r.check, r.target)))
          .join(", ") || "none"
      }`,
    );
  }
  const judged = checkReport(
    check,
    own.filter((r) => !r.elsewhere).map(({ check: _check, ...scenario }) => scenario),
    { strict: config.strict, durationMs, elsewhere: own.filter((r) => r.elsewhere).map((r) => r.target) },
  );
  return withRerunCommands(waiveCheck(judged, config.contract.waivers, today), (id) =>
    rerunCommand(config.contract.file, config.cluster.provider, id, process.cwd(), {
      strict: config.strict,
      ...(config.explorationFlags ? { exploration: config.explorationFlags } : {}),
      ...(config.cluster.provider === "kind" && config.cluster.nodeImage !== undefined
        ? { nodeImage: config.cluster.nodeImage }
        : {}),
    }),
  );
}

/**
 * Whether a result belongs in a `--scenario` run: the scenario asked for,
 * or a reference state that could not be computed (the reason it could not
 * run). Every result when no scenario was asked for.
 */
function asked(scenario: string | undefined, result: ScenarioResult): boolean {
  return (
    scenario === undefined ||
    scenarioKey(result.check, result.target) === scenario ||
    result.target === "reference state"
  );
}
