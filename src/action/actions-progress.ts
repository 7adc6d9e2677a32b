import * as core from "@actions/core";
import { MARK } from "../report/console-reporter.js";
import { waivedText } from "../report/waivers.js";
import type { CheckReport } from "../report/report-model.js";
import type { ProgressReporter } from "../runner/run-kit.js";
import type { CheckDefinition } from "../suites/check.js";
import type { Logger } from "../util/logger.js";

/**
 * Progress in the job log: each phase and each suite's checks folded in a
 * group (`::group::`), the commands the kit runs inside the group of the
 * phase that ran them, and each check's verdict on its own line outside any
 * group so a reader sees the outcome without unfolding.
 */
export function actionsProgress(): ProgressReporter & { close(): void } {
  let open = false;
  const group = (title: string) => {
    if (open) core.endGroup();
    core.startGroup(title);
    open = true;
  };
  const close = () => {
    if (open) core.endGroup();
    open = false;
  };
  // A suite's checks start together and share its scenarios: one group per suite.
  let suite: string | undefined;
  return {
    phase: (line) => {
      suite = undefined;
      group(line);
    },
    checkStarted: (check: CheckDefinition) => {
      const name = check.id.split("/")[0];
      if (!open || name !== suite) group(`suite ${name}`);
      suite = name;
      core.info(`${check.id} (${check.level}): ${check.summary}`);
    },
    step: (_check, line) => core.info(line),
    checkFinished: (report: CheckReport) => {
      close();
      suite = undefined;
      core.info(`${MARK[report.status]} ${report.id} (${(report.durationMs / 1000).toFixed(1)}s)`);
      for (const scenario of report.scenarios) {
        core.info(`  ${MARK[scenario.status].toLowerCase()}: ${scenario.target}: ${scenario.message}`);
        if (scenario.waived) core.info(`    ${waivedText(scenario.waived)}`);
      }
    },
    close,
  };
}

/** The kit's logger in the job log; debug lines show when the workflow enables step debug logging. */
export const actionsLogger: Logger = {
  info: (message) => core.info(message),
  warn: (message) => core.warning(message),
  debug: (message) => core.debug(message),
};
