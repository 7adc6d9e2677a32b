import { describe, expect, it } from "vitest";
import { annotationsOf } from "../../../src/report/annotations.js";
import type { ScenarioReport } from "../../../src/report/report-model.js";
import { reportFixture } from "../../support/report-fixture.js";

const CONTRACT = {
  file: "examples/webapp-operator/reconcile-conformance.yaml",
  text: [
    "# Contract of the example operator.", // 1
    "operator:", // 2
    '  command: ["./bin/manager"]', // 3
    "crds:", // 4
    "  - crds/webapp.yaml", // 5
    "sample: samples/webapp.yaml", // 6
    "# Spec changes applied one after another.", // 7
    "updates:", // 8
    "  - spec:", // 9
    "      replicas: 2", // 10
    "  - spec:", // 11
    "      port: 9090", // 12
    "", // 13
  ].join("\n"),
};
const SAMPLE_LINE = 6;
const UPDATE_LINES = [9, 11];

const { check, scenario, runReport } = reportFixture({ run: { contract: CONTRACT.file } });

const report = runReport([
  check("cluster/optimistic-concurrency", "MUST", "failed", [
    scenario("ConfigMap stale replace", "failed", "the API server accepted a stale replace"),
  ]),
  check("conflict/status-update", "MUST", "failed", [
    scenario("status write for update 2", "failed", "claimed Ready before the Service write"),
  ]),
  check("conflict/child-update", "MUST", "failed", [
    scenario("Deployment/web (update)", "passed", "kept the annotation"),
    scenario("Service/web (update)", "failed", "erased the concurrent change"),
  ]),
  check("status-stability/no-redundant-writes", "SHOULD", "warned", [
    scenario("restart and foreign touches", "warned", "2 no-op writes"),
  ]),
  check("drift/managed-field", "MUST", "passed", [
    scenario("Service/web spec.selector", "passed", "repaired"),
  ]),
  check("idempotency/crash-after-create", "MUST", "inconclusive", [
    scenario("#1 create deployments/web", "inconclusive", "never converged"),
  ]),
  check("status-stability/observed-generation", "MUST", "skipped", [
    scenario("restart and foreign touches", "skipped", "no observedGeneration"),
  ]),
]);

describe("annotationsOf", () => {
  const annotations = annotationsOf(report, CONTRACT);

  it("makes an error per failed MUST check and a warning per warned SHOULD check, nothing else", () => {
    expect(annotations.map((a) => [a.level, a.title])).toEqual([
      ["error", "cluster/optimistic-concurrency (MUST) failed: 1 scenario(s)"],
      ["error", "conflict/status-update (MUST) failed: 1 scenario(s)"],
      ["error", "conflict/child-update (MUST) failed: 1 scenario(s)"],
      ["warning", "status-stability/no-redundant-writes (SHOULD) warns: 1 scenario(s)"],
    ]);
  });

  it("names the failing scenarios' verdicts and the check's docs, not the passing ones", () => {
    const childUpdate = annotations[2];
    expect(childUpdate?.message).toBe(
      "Service/web (update): erased the concurrent change\nSee docs/checks/conflict/child-update.md.",
    );
  });

  it("points at the update a scenario names, else the sample, else the file alone", () => {
    expect(annotations.map((a) => [a.file, a.line])).toEqual([
      [CONTRACT.file, undefined], // a cluster check: nothing in the contract it is about
      [CONTRACT.file, UPDATE_LINES[1]], // "update 2": updates[1]
      [CONTRACT.file, SAMPLE_LINE],
      [CONTRACT.file, SAMPLE_LINE],
    ]);
  });

  it.each<[string, ScenarioReport, number | undefined]>([
    ["update 1 in the target", scenario("status write for update 1", "failed", "m"), UPDATE_LINES[0]],
    [
      "spec 2 in a note",
      scenario("t", "failed", "m", { notes: ["claimed Ready for generation 3 (spec 2)"] }),
      UPDATE_LINES[1],
    ],
    ["spec 1 in the message", scenario("t", "failed", "status write #4 (spec 1) too early"), UPDATE_LINES[0]],
    ["spec 0: the sample itself", scenario("t", "failed", "claimed Ready for spec 0"), SAMPLE_LINE],
    [
      "an update the contract does not have",
      scenario("status write for update 7", "failed", "m"),
      SAMPLE_LINE,
    ],
    ["a field path, not a spec", scenario("Service/web spec.selector", "failed", "m"), SAMPLE_LINE],
  ])("%s", (_, failing, line) => {
    const [annotation] = annotationsOf(
      runReport([check("conflict/status-update", "MUST", "failed", [failing])]),
      CONTRACT,
    );
    expect(annotation?.line).toBe(line);
  });

  it("has no line when the contract has nothing to point at, and no file without a contract", () => {
    const bare = { file: "c.yaml", text: "operator:\n  command: [x]\n" };
    expect(annotationsOf(report, bare).map((a) => [a.file, a.line])).toEqual([
      ["c.yaml", undefined],
      ["c.yaml", undefined],
      ["c.yaml", undefined],
      ["c.yaml", undefined],
    ]);
    expect(annotationsOf(report, { file: "c.yaml", text: ": not [yaml" })[1]?.line).toBeUndefined();
    for (const annotation of annotationsOf(report)) {
      expect(annotation).not.toHaveProperty("file");
      expect(annotation).not.toHaveProperty("line");
    }
  });

  it("makes an error of a SHOULD check that failed a strict run", () => {
    const strict = runReport([
      check("status-stability/no-redundant-writes", "SHOULD", "failed", [
        scenario("restart and foreign touches", "failed", "2 no-op writes"),
      ]),
    ]);
    expect(annotationsOf({ ...strict, strict: true }).map((a) => a.level)).toEqual(["error"]);
  });

  it("points at the update a message is about before the one its target names", () => {
    const [annotation] = annotationsOf(
      runReport([
        check("conflict/status-update", "MUST", "failed", [
          scenario("status write for update 1", "failed", "the concurrent update 2 did not survive"),
        ]),
      ]),
      CONTRACT,
    );
    expect(annotation?.line).toBe(UPDATE_LINES[1]);
  });

  it("caps the message, one line per verdict, saying how many more there are", () => {
    const many = Array.from({ length: 100 }, (_, i) =>
      scenario(`Deployment/web-${i}`, "failed", `drifted\nover ${"two ".repeat(100)}lines`),
    );
    const [annotation] = annotationsOf(runReport([check("drift/managed-field", "MUST", "failed", many)]));
    const lines = annotation?.message.split("\n") ?? [];
    expect(annotation?.message.length).toBeLessThanOrEqual(1500);
    expect(lines[0]).toMatch(/^Deployment\/web-0: drifted over two two .*…$/);
    expect(lines[0]?.length).toBe(300);
    expect(lines.at(-2)).toMatch(/^… and \d+ more$/);
    expect(lines.at(-1)).toBe("See docs/checks/drift/managed-field.md.");
    const shown = lines.length - 2;
    expect(lines.at(-2)).toBe(`… and ${100 - shown} more`);
  });
});

describe("annotationsOf, waivers", () => {
  const contract = {
    file: CONTRACT.file,
    text: [
      CONTRACT.text,
      "waivers:", // 14
      "  - check: drift/managed-field", // 15
      "    reason: mesh owns the ports", // 16
      "  - check: conflict/child-update", // 17
      "    reason: fix in #42", // 18
      "    until: 2026-01-31", // 19
      "  - check: drift/deleted-child", // 20
      "    reason: applied one", // 21
      "",
    ].join("\n"),
  };
  const waived = runReport([
    check("drift/deleted-child", "MUST", "waived", [
      {
        ...scenario("Service/web", "waived", "not recreated"),
        waived: { rule: "waivers[2]", reason: "applied one", was: "failed" },
      },
    ]),
  ]);
  const withWaivers = {
    ...waived,
    waivers: [
      {
        rule: "waivers[0]",
        check: "drift/managed-field",
        reason: "mesh owns the ports",
        outcome: "stale" as const,
        waived: [],
        message: "waivers[0] for drift/managed-field matched no failure",
      },
      {
        rule: "waivers[1]",
        check: "conflict/child-update",
        reason: "fix in #42",
        until: "2026-01-31",
        outcome: "expired" as const,
        waived: [],
        message: "waivers[1] for conflict/child-update expired on 2026-01-31",
      },
      {
        rule: "waivers[2]",
        check: "drift/deleted-child",
        reason: "applied one",
        outcome: "applied" as const,
        waived: ["Service/web"],
        message: "waivers[2] waived 1 failure(s)",
      },
    ],
  };

  it("makes a warning for a stale waiver and an error for an expired one, on its line; none for a waived check", () => {
    expect(annotationsOf(withWaivers, contract)).toEqual([
      {
        level: "warning",
        title: "waivers[0] (drift/managed-field) is stale",
        message: "waivers[0] for drift/managed-field matched no failure",
        file: CONTRACT.file,
        line: 15,
      },
      {
        level: "error",
        title: "waivers[1] (conflict/child-update) is expired",
        message: "waivers[1] for conflict/child-update expired on 2026-01-31",
        file: CONTRACT.file,
        line: 17,
      },
    ]);
  });
});
