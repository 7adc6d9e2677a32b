/** How a front end spells the settings a request's errors name. */
export interface SettingNames {
  /** Before a cluster setting's own name: "--" (--cluster) or "input " (input cluster). */
  readonly prefix: string;
  readonly config: string;
  readonly suites: string;
  readonly checks: string;
  readonly scenario: string;
  readonly parallel: string;
  readonly shard: string;
  readonly generatedUpdates: string;
  readonly seed: string;
  readonly updateFaults: string;
}

export const CLI_SETTINGS: SettingNames = {
  prefix: "--",
  config: "--config",
  suites: "--suite",
  checks: "--check",
  scenario: "--scenario",
  parallel: "--parallel",
  shard: "--shard",
  generatedUpdates: "--generated-updates",
  seed: "--seed",
  updateFaults: "--update-faults",
};

/** The Action's inputs (action.yml). */
export const ACTION_SETTINGS: SettingNames = {
  prefix: "input ",
  config: "input config",
  suites: "input suites",
  checks: "input checks",
  scenario: "input scenario",
  parallel: "input parallel",
  shard: "input shard",
  generatedUpdates: "input generated-updates",
  seed: "input seed",
  updateFaults: "input update-faults",
};
