import { describe, expect, it } from "vitest";
import {
  checkReport,
  deriveStatus,
  exitCodeOfReport,
  levelled,
  type Status,
} from "../../../src/report/report-model.js";

describe("deriveStatus", () => {
  it.each<[Status[], Status]>([
    [[], "skipped"],
    [["skipped", "skipped"], "skipped"],
    [["passed", "skipped"], "passed"],
    [["passed", "warned"], "warned"],
    [["warned", "inconclusive", "passed"], "inconclusive"],
    [["inconclusive", "failed"], "failed"],
  ])("%j -> %s", (statuses, expected) => {
    expect(deriveStatus(statuses)).toBe(expected);
  });
});

describe("levels", () => {
  it("a SHOULD failure warns unless strict; a MUST failure always fails", () => {
    expect(levelled("failed", "SHOULD", false)).toBe("warned");
    expect(levelled("failed", "SHOULD", true)).toBe("failed");
    expect(levelled("failed", "MUST", false)).toBe("failed");
    expect(levelled("inconclusive", "SHOULD", false)).toBe("inconclusive");
  });

  it("builds a check's report from its scenarios, with its docs", () => {
    const scenario = { target: "t", status: "failed" as const, message: "m", durationMs: 1 };
    const report = checkReport({ id: "status-stability/no-redundant-writes", level: "SHOULD" }, [scenario], {
      strict: false,
      durationMs: 5,
    });
    expect(report).toMatchObject({
      status: "warned",
      docs: "docs/checks/status-stability/no-redundant-writes.md",
      scenarios: [{ status: "warned" }],
    });
  });

  it("never lets a check without scenarios pass as a silent skip", () => {
    const report = checkReport({ id: "idempotency/recreate-same-name", level: "MUST" }, [], {
      strict: false,
      durationMs: 0,
    });
    expect(report.status).toBe("inconclusive");
    expect(report.scenarios[0]?.message).toMatch(/defect of the kit/);
  });
});

describe("exit codes", () => {
  it.each<[Status, number]>([
    ["passed", 0],
    ["warned", 0],
    ["skipped", 0],
    ["failed", 1],
    ["inconclusive", 3],
  ])("%s -> %d", (status, code) => {
    expect(exitCodeOfReport({ status })).toBe(code);
  });
});
