import { describe, expect, it } from "vitest";
import { dyingWords } from "../../../src/scenario/inconclusive.js";

describe("dyingWords", () => {
  it("finds the line that says why an operator died, else its last line", () => {
    expect(
      dyingWords([
        "I1207 starting",
        "panic: runtime error: index out of range [0] with length 0",
        "goroutine 1 [running]:",
      ]),
    ).toBe("panic: runtime error: index out of range [0] with length 0");
    expect(dyingWords(['{"level":"info","msg":"x"}', '{"level":"fatal","msg":"no image set"}', "exit"])).toBe(
      '{"level":"fatal","msg":"no image set"}',
    );
    expect(dyingWords(["one", "two"])).toBe("two");
    expect(dyingWords([])).toBeUndefined();
  });
});
