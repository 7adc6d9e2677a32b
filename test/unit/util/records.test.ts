import { describe, expect, it } from "vitest";
import { applyMergePatch } from "../../../src/util/records.js";

describe("applyMergePatch", () => {
  // The examples of RFC 7386's appendix, and what a contract's spec updates do.
  it.each([
    [{ a: "b" }, { a: "c" }, { a: "c" }],
    [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
    [{ a: "b" }, { a: null }, {}],
    [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
    [{ a: ["b"] }, { a: "c" }, { a: "c" }],
    [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
    [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
    [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
    [
      ["a", "b"],
      ["c", "d"],
      ["c", "d"],
    ],
    [{ a: "b" }, ["c"], ["c"]],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: "b", c: null }, { a: "b" }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
    [
      { spec: { replicas: 1, port: 8080, args: ["--greeting=hello"] } },
      { spec: { port: 9090, args: ["--greeting=bonjour"] } },
      { spec: { replicas: 1, port: 9090, args: ["--greeting=bonjour"] } },
    ],
  ])("%j patched with %j is %j", (target, patch, expected) => {
    expect(applyMergePatch(target, patch)).toEqual(expected);
  });

  it("changes neither input", () => {
    const target = { spec: { args: ["a"], nested: { keep: 1 } } };
    const patch = { spec: { nested: { add: 2 } } };
    const merged = applyMergePatch(target, patch) as { spec: { nested: Record<string, number> } };
    merged.spec.nested.more = 3;
    expect(target).toEqual({ spec: { args: ["a"], nested: { keep: 1 } } });
    expect(patch).toEqual({ spec: { nested: { add: 2 } } });
  });
});
