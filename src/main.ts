import * as core from "@actions/core";
import { readFile } from "node:fs/promises";
import { reportLeftovers } from "./cleanup/leftovers.js";
import { processEnvironment } from "./cluster/cluster-config.js";
import { describeError, exitCodeOf, InfrastructureError } from "./errors.js";
import { abortOnSignals } from "./process/shutdown.js";
import { annotationsOf } from "./report/annotations.js";
import { writeReportFiles } from "./report/report-files.js";
import { exitCodeOfReport, type RunReport, type Status } from "./report/report-model.js";
import { deleteClusterCommand, runKit } from "./runner/run-kit.js";
import { prepareRun } from "./runner/run-options.js";
import { ACTION_SETTINGS } from "./runner/setting-names.js";
import { systemClock } from "./util/clock.js";
import { pathFrom } from "./util/files.js";
import { onSecret } from "./util/secrets.js";
import { actionsCommandRunner } from "./action/actions-runner.js";
import { actionsLogger, actionsProgress } from "./action/actions-progress.js";
import { actionSettings } from "./action/inputs.js";
import { STATE } from "./action/state.js";
import { ensureTools } from "./action/tools.js";

/**
 * The Action's main step: inputs -> the same run the CLI makes -> outputs,
 * job summary, annotations and report files. The core knows nothing of
 * Actions: it gets this step's command runner, logger and progress.
 */
export async function run(): Promise<void> {
  core.saveState(STATE.ownerPid, String(process.pid));
  // Tokens and client keys the kit comes across are masked in the job log from the moment it does.
  onSecret((secret) => core.setSecret(secret));
  const shutdown = abortOnSignals((signal) => core.warning(`${signal}: stopping and cleaning up`));
  const progress = actionsProgress();
  try {
    const settings = actionSettings((name) => core.getInput(name), process.env);
    const environment = processEnvironment();
    // Every input is checked, and the contract read, before a download or a build.
    const prepared = await prepareRun(settings.request, environment, ACTION_SETTINGS);
    await ensureTools(settings, {
      runner: actionsCommandRunner,
      logger: actionsLogger,
      environment,
      signal: shutdown.signal,
    });
    await reportLeftovers(environment, actionsLogger);
    const report = await runKit(prepared.config, {
      runner: actionsCommandRunner,
      logger: actionsLogger,
      signal: shutdown.signal,
      clock: systemClock,
      progress,
    });
    progress.close();
    const files = await writeReportFiles(report, prepared.reportDir, {
      ...docsBase(process.env),
      baseDir: workspace(),
    });
    // The verdict first: outputs and the step's outcome must not depend on the presentation after it.
    setOutputs(report, files);
    if (settings.keepCluster && !passed(report.status) && report.cluster.provider !== "existing") {
      const name = report.cluster.name ?? "";
      core.saveState(STATE.keptCluster, `${report.cluster.provider} cluster ${name}`);
      core.saveState(STATE.keptClusterDelete, deleteClusterCommand(report.cluster.provider, name));
    }
    const code = exitCodeOfReport(report);
    if (code !== 0 && settings.failOnViolation) {
      core.setFailed(failureMessage(report));
      process.exitCode = code;
    } else if (code !== 0) {
      core.warning(`${failureMessage(report)} (fail-on-violation is false: the step passes)`);
    }
    await core.summary
      .addRaw(files.summaryMarkdown)
      .write()
      .catch((error: unknown) =>
        core.warning(`could not write the job summary (${describeError(error)}); it is in ${files.summary}`),
      );
    await annotate(report).catch((error: unknown) =>
      core.warning(`could not annotate the contract: ${describeError(error)}`),
    );
  } catch (error) {
    progress.close();
    core.setFailed(describeError(error));
    if (error instanceof InfrastructureError) for (const line of error.details) core.info(`  ${line}`);
    process.exitCode = exitCodeOf(error);
  } finally {
    shutdown.dispose();
  }
}

function passed(status: Status): boolean {
  return status === "passed" || status === "warned" || status === "waived" || status === "skipped";
}

function setOutputs(report: RunReport, files: { json: string; junit: string }): void {
  core.setOutput("result", passed(report.status) ? "passed" : report.status);
  for (const status of ["passed", "failed", "warned", "waived", "skipped", "inconclusive"] as const) {
    core.setOutput(status, String(report.checks.filter((c) => c.status === status).length));
  }
  core.setOutput("report-json", files.json);
  core.setOutput("report-junit", files.junit);
}

function failureMessage(report: RunReport): string {
  const failed = report.checks.filter((c) => c.status === "failed").map((c) => c.id);
  const inconclusive = report.checks.filter((c) => c.status === "inconclusive").map((c) => c.id);
  const expired = (report.waivers ?? []).filter((w) => w.outcome === "expired").map((w) => w.message);
  const parts = [
    ...(failed.length > 0 ? [`${failed.length} check(s) failed: ${failed.join(", ")}`] : []),
    ...expired,
    ...(inconclusive.length > 0
      ? [`${inconclusive.length} check(s) inconclusive (the kit could not tell): ${inconclusive.join(", ")}`]
      : []),
  ];
  return `reconcile-conformance: ${parts.join("; ")}. See the job summary and the report artifact.`;
}

/** An error per failed MUST check, a warning per warned SHOULD check, on the contract's line when there is one. */
async function annotate(report: RunReport): Promise<void> {
  const text = await readFile(report.contract, "utf8").catch(() => undefined);
  const base = workspace();
  for (const annotation of annotationsOf(
    report,
    text === undefined ? undefined : { file: report.contract, text },
  )) {
    const properties = {
      title: annotation.title,
      ...(annotation.file ? { file: pathFrom(base, annotation.file) } : {}),
      ...(annotation.line === undefined ? {} : { startLine: annotation.line }),
    };
    if (annotation.level === "error") core.error(annotation.message, properties);
    else core.warning(annotation.message, properties);
  }
}

/** The job's checkout: the annotations' files and the summary's paths are named from it. */
function workspace(): string {
  return process.env.GITHUB_WORKSPACE ?? process.cwd();
}

/** Links from the summary to the check docs of the version of the action that ran. */
function docsBase(env: NodeJS.ProcessEnv): { docsBaseUrl?: string } {
  const server = env.GITHUB_SERVER_URL;
  // The action's repository and ref together, or the workflow's own (`uses: ./`) together: never
  // one of each (the action's are empty inside composite actions).
  const [repository, ref] =
    env.GITHUB_ACTION_REPOSITORY && env.GITHUB_ACTION_REF
      ? [env.GITHUB_ACTION_REPOSITORY, env.GITHUB_ACTION_REF]
      : [env.GITHUB_REPOSITORY, env.GITHUB_SHA];
  return server && repository && ref ? { docsBaseUrl: `${server}/${repository}/blob/${ref}` } : {};
}
