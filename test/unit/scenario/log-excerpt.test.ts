import { describe, expect, it } from "vitest";
import { logExcerpt } from "../../../src/scenario/log-excerpt.js";

// The operator's log in evidence: each distinct line once, other scenarios' namespaces left out.
const own = "rc-drift-field-1a2b3c";

describe("logExcerpt", () => {
  it.each<[string, string[], number, string[], number]>([
    ["lines as they are when nothing repeats", ["a", "b", "c"], 10, ["a", "b", "c"], 0],
    ["the last `count`", ["a", "b", "c"], 2, ["b", "c"], 0],
    ["empty lines left out", ["a", "", "  ", "b"], 10, ["a", "b"], 0],
    [
      "a repeated error and its stack once, with how many times, where it last came",
      ["boom", "  at f (x.go:1)", "ok", "boom", "  at f (x.go:1)"],
      10,
      ["ok", "boom (x2)", "  at f (x.go:1) (x2)"],
      0,
    ],
    [
      "repeats that differ only in their timestamps",
      [
        "2026-12-01T10:00:00.123Z ERROR reconcile failed",
        "2026-12-01T10:00:01.456Z ERROR reconcile failed",
        '{"ts":1764583200.1,"msg":"retry"}',
        '{"ts":1764583201.2,"msg":"retry"}',
      ],
      10,
      ["2026-12-01T10:00:00.123Z ERROR reconcile failed (x2)", '{"ts":1764583200.1,"msg":"retry"} (x2)'],
      0,
    ],
    [
      "lines about other scenarios' namespaces left out, its own kept",
      [
        `reconciling ${own}/hello`,
        "reconciling rc-crash-after-write-9f8e7d/hello",
        "namespace rc-recreate-0a0b0c terminating",
      ],
      10,
      [`reconciling ${own}/hello`],
      2,
    ],
    [
      "a line naming its own and another namespace kept",
      [`moving from rc-other-aaaaaa to ${own}`],
      10,
      [`moving from rc-other-aaaaaa to ${own}`],
      0,
    ],
  ])("%s", (_name, lines, count, expected, foreign) => {
    expect(logExcerpt(lines, own, count)).toEqual({ lines: expected, foreign });
  });
});
