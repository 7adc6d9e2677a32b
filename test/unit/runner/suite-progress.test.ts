import { describe, expect, it } from "vitest";
import { SuiteProgress } from "../../../src/runner/suite-progress.js";

describe("SuiteProgress", () => {
  const record = () => {
    const lines: string[] = [];
    const progress = new SuiteProgress<string>((suite, line) => lines.push(`${suite}: ${line}`));
    return { lines, progress };
  };

  it("shows the first suite's steps at once", () => {
    const { lines, progress } = record();
    progress.step(0, "drift", "a");
    expect(lines).toEqual(["drift: a"]);
  });

  it("holds a later suite's steps until its turn, then shows them in the order they came", () => {
    const { lines, progress } = record();
    progress.step(2, "staleness", "s1");
    progress.step(1, "idempotency", "i1");
    progress.step(2, "staleness", "s2");
    progress.step(0, "drift", "d1");
    expect(lines).toEqual(["drift: d1"]);
    progress.report(1);
    expect(lines).toEqual(["drift: d1", "idempotency: i1"]);
    progress.step(1, "idempotency", "i2");
    progress.step(0, "drift", "late");
    progress.report(2);
    expect(lines).toEqual([
      "drift: d1",
      "idempotency: i1",
      "idempotency: i2",
      "staleness: s1",
      "staleness: s2",
    ]);
  });

  it("shows a held suite's steps only once", () => {
    const { lines, progress } = record();
    progress.step(1, "conflict", "c1");
    progress.report(1);
    progress.report(1);
    expect(lines).toEqual(["conflict: c1"]);
  });
});
