// npm run record-observations -- --from DIR [--to test/fixtures/observations]
//
// Picks, from the scenario folders a kill matrix run kept (`npm run matrix -- --work-dir DIR`), one
// recorded observation per mutant and check that the mutant's kill-matrix.yaml says must fail,
// preferring a failed verdict, and writes each as a fixture the judges' table tests re-judge
// (test/unit/suites/recorded-observations.test.ts): a change to a judge then shows which recorded
// verdict it changes. Also one passing observation per check from each operator's reference, and per
// check that pairs children by role from each correct variant.
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { format, resolveConfig } from "prettier";
import { OBSERVATION_FILE, type RecordedObservation } from "../src/runner/suite-runner.js";
import { loadKillMatrix, MATRIX_OPERATORS } from "../test/support/kill-matrix.js";

const { values } = parseArgs({
  options: { from: { type: "string" }, to: { type: "string", default: "test/fixtures/observations" } },
});
if (!values.from) throw new Error("--from DIR: the --work-dir of a kill matrix run");
const root = join(import.meta.dirname, "..");
const MAX_FIXTURE_BYTES = 512 * 1024;
/** The checks whose verdicts rest on children paired by role and on values generated per life. */
const ROLE_CHECKS = [
  "idempotency/crash-after-create",
  "idempotency/crash-after-write",
  "idempotency/recreate-same-name",
  "drift/managed-field",
  "drift/deleted-child",
  "conflict/child-update",
  "staleness/restart-from-the-past",
  "differential/update-equals-creation",
  // Found by role too: what the reference's cleanup removed, in another life (directory-<uid>).
  "deletion/crash-during-cleanup",
  "deletion/cleanup-retried",
  "deletion/no-resurrection",
];

/** Every observation.json below `dir`. */
async function observations(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile() && e.name === OBSERVATION_FILE)
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

let written = 0;
for (const operator of MATRIX_OPERATORS) {
  const matrix = await loadKillMatrix(operator);
  const wanted: [string, readonly string[], string][] = [
    ["reference", [], "passed"],
    // A correct variant's passes on the checks that pair children across lives and judge per-life values.
    ...Object.keys(matrix.variants ?? {}).map((name): [string, readonly string[], string] => [
      name,
      ROLE_CHECKS,
      "passed",
    ]),
    ...Object.entries(matrix.mutants).map(([name, m]): [string, readonly string[], string] => [
      name,
      m.mustFail,
      "failed",
    ]),
  ];
  for (const [name, mustFail, status] of wanted) {
    const files = await observations(join(values.from, operator.name, name));
    const recorded = await Promise.all(
      files.map(async (file) => ({
        file,
        data: JSON.parse(await readFile(file, "utf8")) as RecordedObservation,
      })),
    );
    const checks =
      name === "reference"
        ? [...new Set(recorded.flatMap((r) => r.data.verdicts.map((v) => v.check)))]
        : mustFail;
    for (const check of checks) {
      const hit = recorded.find((r) => r.data.verdicts.some((v) => v.check === check && v.status === status));
      if (!hit) {
        console.log(`${operator.name}/${name}: no ${status} observation of ${check}`);
        continue;
      }
      const verdict = hit.data.verdicts.find((v) => v.check === check);
      const fixture = {
        contract: relative(root, join(operator.dir, "reconcile-conformance.yaml")),
        ...(operator.contractFields ? { contractFields: operator.contractFields } : {}),
        case: `${operator.name}/${name}`,
        check,
        target: hit.data.target,
        verdict: { status: verdict?.status, message: verdict?.message },
        observation: hit.data.observation,
      };
      const out = join(values.to, operator.name, name, `${check.replace("/", "--")}.json`);
      // Written as `npm run lint` (prettier --check) wants it, so a refresh needs no formatting by hand.
      const text = await format(JSON.stringify(fixture), {
        ...(await resolveConfig(out)),
        filepath: out,
      });
      if (text.length > MAX_FIXTURE_BYTES) {
        // An operator that never fell quiet records thousands of writes: too big to keep in the repository.
        console.log(`${operator.name}/${name}: ${check}'s observation is ${text.length} bytes; not kept`);
        continue;
      }
      await mkdir(join(values.to, operator.name, name), { recursive: true });
      await writeFile(out, text);
      written++;
    }
  }
}
console.log(`${written} fixture(s) in ${values.to}`);
