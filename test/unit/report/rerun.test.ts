import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../../src/errors.js";
import { loadContract } from "../../../src/contract/load-contract.js";
import { rerunCommand, withRerunCommands } from "../../../src/report/rerun.js";
import { selectChecks } from "../../../src/runner/run-kit.js";
import { prepareRun } from "../../../src/runner/run-options.js";
import { exampleDir } from "../../support/webapp-example.js";
import { reportFixture } from "../../support/report-fixture.js";

const example = join(exampleDir, "reconcile-conformance.yaml");
const environment = { env: { RECONCILE_CONFORMANCE_CACHE: "/cache" }, homeDir: "/home/u" };

describe("rerunCommand", () => {
  it("names the contract from here when it is under here, and quotes the scenario id for a shell", () => {
    expect(
      rerunCommand(
        "/repo/op/reconcile-conformance.yaml",
        "kwok",
        "drift/managed-field#Service/web spec.ports[0].port",
        "/repo",
      ),
    ).toBe(
      "npx reconcile-conformance run --config op/reconcile-conformance.yaml --cluster kwok --scenario 'drift/managed-field#Service/web spec.ports[0].port' --keep",
    );
    expect(rerunCommand("/elsewhere/c.yaml", "kind", "conflict/child-update#it's", "/repo")).toBe(
      "npx reconcile-conformance run --config /elsewhere/c.yaml --cluster kind --scenario 'conflict/child-update#it'\\''s' --keep",
    );
  });

  it("keeps what decided the verdict: --strict (a SHOULD check fails only under it) and the kind node image", () => {
    expect(
      rerunCommand("/repo/c.yaml", "kind", "drift/managed-field#x", "/repo", {
        strict: true,
        nodeImage: "kindest/node:v1.35.4",
      }),
    ).toBe(
      "npx reconcile-conformance run --config c.yaml --cluster kind --node-image kindest/node:v1.35.4 --scenario 'drift/managed-field#x' --strict --keep",
    );
    expect(rerunCommand("/repo/c.yaml", "kwok", "drift/managed-field#x", "/repo", { strict: false })).toBe(
      "npx reconcile-conformance run --config c.yaml --cluster kwok --scenario 'drift/managed-field#x' --keep",
    );
  });

  it("repeats what chose the run's scenarios: the generated updates' budget and seed, and the update faults' lines", () => {
    expect(
      rerunCommand("/repo/c.yaml", "kwok", "idempotency/crash-after-write#update 2: x", "/repo", {
        exploration: { max: 3, seed: 7, updateFaults: "all" },
      }),
    ).toBe(
      "npx reconcile-conformance run --config c.yaml --cluster kwok --scenario 'idempotency/crash-after-write#update 2: x' --generated-updates 3 --seed 7 --update-faults all --keep",
    );
  });

  it("is given to every scenario that did not pass, and to no other", () => {
    const { check, scenario } = reportFixture();
    const report = withRerunCommands(
      check("drift/managed-field", "MUST", "failed", [
        scenario("a", "failed", "m"),
        scenario("b", "passed", "m"),
        scenario("c", "inconclusive", "m"),
        scenario("d", "skipped", "m"),
      ]),
      (id) => `rerun ${id}`,
    );
    expect(report.scenarios.map((s) => s.rerun)).toEqual([
      "rerun drift/managed-field#a",
      undefined,
      "rerun drift/managed-field#c",
      undefined,
    ]);
  });
});

describe("--scenario", () => {
  it("selects its check alone, and refuses an id that names no check, or a check the run leaves out", async () => {
    const contract = await loadContract(example);
    expect([
      ...selectChecks({ contract, scenario: "drift/managed-field#Service/hello spec.selector" }),
    ]).toEqual(["drift/managed-field"]);
    for (const [request, message] of [
      [{ scenario: "drift/managed-field" }, 'expected "<check id>#<target>" as the report names it'],
      [{ scenario: "drift/nonsense#x" }, '--scenario "drift/nonsense#x": expected "<check id>#<target>"'],
      [{ scenario: "drift/managed-field#" }, "expected"],
      [
        { scenario: "drift/managed-field#x", checks: ["conflict/child-update"] },
        "its check drift/managed-field is not among the selected ones (conflict/child-update)",
      ],
    ] as const) {
      expect(() => selectChecks({ contract, ...request }), JSON.stringify(request)).toThrow(UsageError);
      expect(() => selectChecks({ contract, ...request }), JSON.stringify(request)).toThrow(message);
    }
  });

  it("is one scenario, a shard a share: a run takes one of the two", async () => {
    await expect(
      prepareRun(
        { config: example, cluster: { provider: "kwok" }, shard: "1/2", scenario: "drift/managed-field#x" },
        environment,
      ),
    ).rejects.toThrow("--scenario runs one scenario, --shard a share of them: give one of the two");
  });
});
