import { join } from "node:path";
import { cruise, type ICruiseResult, type IForbiddenRuleType } from "dependency-cruiser";
import { beforeAll, describe, expect, it } from "vitest";
import { SUITE_NAMES } from "../../src/suites/suite-names.js";

// The layers of src/ as docs/design/architecture.md draws them, checked by dependency-cruiser on the
// real import graph: no import cycle at run time; runner -> suites -> scenario, never back; a suite folder
// never imports another suite (what suites share lives in src/suites/shared or lower).
const root = join(import.meta.dirname, "../..");

const others = (suite: string) => SUITE_NAMES.filter((s) => s !== suite).join("|");
const rules: IForbiddenRuleType[] = [
  // A cycle of `import type` alone vanishes in the build; any other is refused.
  {
    name: "no-cycles",
    severity: "error",
    from: {},
    to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
  },
  ...SUITE_NAMES.map((suite): IForbiddenRuleType => ({
    name: `suite-${suite}-stays-in-its-folder`,
    severity: "error",
    from: { path: `^src/suites/${suite}/` },
    to: { path: `^src/suites/(${others(suite)})/` },
  })),
  {
    name: "shared-check-machinery-imports-no-suite",
    severity: "error",
    from: { path: "^src/suites/shared/" },
    to: { path: `^src/suites/(${SUITE_NAMES.join("|")}|index\\.ts)` },
  },
  {
    name: "suites-do-not-import-the-runner",
    severity: "error",
    from: { path: "^src/suites/" },
    to: { path: "^src/runner/" },
  },
  {
    name: "the-scenario-layer-is-below-runner-and-suites",
    severity: "error",
    from: { path: "^src/scenario/" },
    to: { path: "^src/(runner|suites)/" },
  },
  {
    name: "the-core-never-imports-the-action-toolkit",
    severity: "error",
    from: { path: "^src/", pathNot: "^src/(action/|main\\.ts$|post\\.ts$|index\\.ts$)" },
    to: { path: "^node_modules/@actions/" },
  },
];

let result: ICruiseResult;
beforeAll(async () => {
  const cwd = process.cwd();
  process.chdir(root);
  try {
    const output = await cruise(["src"], {
      validate: true,
      ruleSet: { forbidden: rules },
      tsPreCompilationDeps: true,
      tsConfig: { fileName: "tsconfig.json" },
      doNotFollow: { path: "node_modules" },
    });
    if (typeof output.output === "string") throw new Error("expected the cruise result as an object");
    result = output.output;
  } finally {
    process.chdir(cwd);
  }
}, 60_000);

describe("the import graph of src/", () => {
  it("reads every module", () => {
    expect(result.summary.totalCruised).toBeGreaterThan(100);
    expect(result.modules.some((m) => m.source === "src/suites/drift/managed-field.ts")).toBe(true);
  });

  it.each(rules.map((r) => [r.name]))("obeys %s", (name) => {
    const violations = result.summary.violations
      .filter((v) => v.rule.name === name)
      .map((v) => (v.cycle ? v.cycle.map((c) => c.name).join(" -> ") : `${v.from} -> ${v.to}`));
    expect(violations).toEqual([]);
  });
});
