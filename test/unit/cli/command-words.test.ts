import { describe, expect, it } from "vitest";
import { commandWords } from "../../../src/cli/command-words.js";
import { UsageError } from "../../../src/errors.js";

describe("commandWords", () => {
  it.each([
    ["./bin/manager --leader-elect=false", ["./bin/manager", "--leader-elect=false"]],
    ["  spaced \t out  ", ["spaced", "out"]],
    ["./op --greeting 'hello there'", ["./op", "--greeting", "hello there"]],
    ['./op --x="a\\"b" "back\\\\slash"', ["./op", '--x=a"b', "back\\slash"]],
    // Inside double quotes only \" and \\ are escapes; outside, a backslash takes the next character.
    ['./op "a\\nb" c\\ d', ["./op", "a\\nb", "c d"]],
    ["./op '' \"\"", ["./op", "", ""]],
    ["./op 'it''s'", ["./op", "its"]],
    ['["./op", "a b"]', ["./op", "a b"]],
    ['  ["./op"]', ["./op"]],
  ])("splits %j", (text, words) => {
    expect(commandWords(text)).toEqual(words);
  });

  it.each([
    ["./op 'unclosed", `init: --command "./op 'unclosed": unclosed '`],
    ['./op "unclosed', 'init: --command "./op \\"unclosed": unclosed "'],
    [
      "   ",
      'init: --command "   ": expected at least the program, e.g. "./bin/manager --leader-elect=false"',
    ],
    ["[]", 'init: --command "[]": expected at least the program, e.g. "./bin/manager --leader-elect=false"'],
    [
      "[1]",
      'init: --command "[1]": expected a JSON list of words, e.g. ["./bin/manager", "--leader-elect=false"]',
    ],
    [
      "[nope",
      'init: --command "[nope": expected a JSON list of words, e.g. ["./bin/manager", "--leader-elect=false"]',
    ],
  ])("refuses %j", (text, message) => {
    expect(() => commandWords(text)).toThrow(new UsageError("init/bad-command", message));
    expect(() => commandWords(text)).toThrow(expect.objectContaining({ code: "init/bad-command" }));
  });
});
