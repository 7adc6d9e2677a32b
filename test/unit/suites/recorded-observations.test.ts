import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadContract } from "../../../src/contract/load-contract.js";
import { KNOWN_CHECKS } from "../../../src/suites/index.js";
import { writeExampleContract } from "../../support/example-run.js";

// Observations recorded from real runs (the kill matrices of the example operators: each mutant's
// scenario of every check it must fail, and a passing one of each check from each reference),
// judged again: the verdict must be the one the run gave. A change to a judge that moves a
// recorded verdict fails here, naming the case, in milliseconds. Refresh the fixtures with
// `npm run matrix -- --work-dir DIR` and `npm run record-observations -- --from DIR`.
const root = join(import.meta.dirname, "../../..");
const dir = join(root, "test/fixtures/observations");

interface Fixture {
  readonly contract: string;
  /** Fields the matrix added to the contract file (MatrixOperator.contractFields). */
  readonly contractFields?: Record<string, unknown>;
  readonly case: string;
  readonly check: string;
  readonly target: string;
  readonly verdict: { readonly status: string; readonly message: string };
  readonly observation: unknown;
}

const fixtures = readdirSync(dir, { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".json"))
  .sort()
  .map((f) => ({ file: f, ...(JSON.parse(readFileSync(join(dir, f), "utf8")) as Fixture) }));

// A matrix that adds fields to the example's contract (the clock matrix) runs a written copy of it.
const written = new Map<string, Promise<string>>();
function contractOf(fixture: Fixture) {
  const { contractFields } = fixture;
  if (!contractFields) return loadContract(join(root, fixture.contract));
  const key = JSON.stringify(contractFields);
  let file = written.get(key);
  if (!file) written.set(key, (file = writeExampleContract("webapp-operator", { extra: contractFields })));
  return file.then(loadContract);
}

describe("recorded observations", () => {
  it("cover every check, and a failing observation of every check some mutant must fail", () => {
    const checks = new Set(fixtures.map((f) => f.check));
    expect(KNOWN_CHECKS.map((c) => c.id).filter((id) => !checks.has(id))).toEqual([]);
    expect(fixtures.filter((f) => f.verdict.status === "failed").length).toBeGreaterThan(10);
  });

  it.each(fixtures.map((f) => [`${f.case} ${f.check} ${f.target}`, f] as const))(
    "%s is judged as the run judged it",
    async (_name, fixture) => {
      const check = KNOWN_CHECKS.find((c) => c.id === fixture.check);
      expect(check, fixture.check).toBeDefined();
      const contract = await contractOf(fixture);
      const verdict = check?.judge(fixture.observation, contract);
      expect({ status: verdict?.status, message: verdict?.message }).toEqual(fixture.verdict);
    },
  );
});
