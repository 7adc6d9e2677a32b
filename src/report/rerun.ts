import { pathFrom } from "../util/files.js";
import type { CheckReport, ScenarioReport } from "./report-model.js";

/** Verdicts worth rerunning alone: everything that did not pass (and was not skipped). */
const RERUN: ReadonlySet<ScenarioReport["status"]> = new Set(["failed", "warned", "waived", "inconclusive"]);

/** A word for a POSIX shell: as it is when plain, else single-quoted. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * The one command that runs a scenario again alone and keeps its cluster
 * and namespace: `reconcile-conformance run --config F --cluster P
 * --scenario '<check>#<target>' --keep` (the contract relative to `cwd` when
 * it lies under it), with what else decided the verdict: `--strict` (under
 * it a SHOULD check fails the run), the kind node image, and the
 * exploration's budget and seed when the command line set them.
 */
export function rerunCommand(
  contractFile: string,
  provider: string,
  scenarioId: string,
  cwd: string,
  options: {
    readonly strict?: boolean;
    readonly nodeImage?: string;
    /**
     * --generated-updates, --seed and --update-faults as the run had them: the same generated
     * updates and the same lines, by the same names.
     */
    readonly exploration?: { readonly max?: number; readonly seed?: number; readonly updateFaults?: string };
  } = {},
): string {
  const { max, seed, updateFaults } = options.exploration ?? {};
  return [
    "npx reconcile-conformance run",
    `--config ${shellWord(pathFrom(cwd, contractFile))}`,
    `--cluster ${shellWord(provider)}`,
    ...(options.nodeImage === undefined ? [] : [`--node-image ${shellWord(options.nodeImage)}`]),
    `--scenario ${shellWord(scenarioId)}`,
    ...(options.strict === true ? ["--strict"] : []),
    ...(max === undefined ? [] : [`--generated-updates ${max}`]),
    ...(seed === undefined ? [] : [`--seed ${seed}`]),
    ...(updateFaults === undefined ? [] : [`--update-faults ${updateFaults}`]),
    "--keep",
  ].join(" ");
}

/** The check's report with `rerun` set on every scenario that did not pass. */
export function withRerunCommands(check: CheckReport, command: (scenarioId: string) => string): CheckReport {
  if (!check.scenarios.some((s) => RERUN.has(s.status))) return check;
  return {
    ...check,
    scenarios: check.scenarios.map((s) =>
      RERUN.has(s.status) ? { ...s, rerun: command(`${check.id}#${s.target}`) } : s,
    ),
  };
}
