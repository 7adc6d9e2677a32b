import { UsageError } from "../errors.js";

const JSON_EXPECTED = 'expected a JSON list of words, e.g. ["./bin/manager", "--leader-elect=false"]';

/**
 * The words of init's --command: a JSON list of words, or a command line
 * split as a shell would (quotes, backslashes; nothing expanded). A
 * UsageError (init/bad-command) names the text and what is wrong with it.
 */
export function commandWords(text: string): string[] {
  const bad = (why: string) =>
    new UsageError("init/bad-command", `init: --command ${JSON.stringify(text)}: ${why}`);
  let words: string[];
  if (text.trimStart().startsWith("[")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw bad(JSON_EXPECTED);
    }
    if (!Array.isArray(parsed) || !parsed.every((w) => typeof w === "string")) throw bad(JSON_EXPECTED);
    words = parsed.filter((w): w is string => typeof w === "string");
  } else {
    words = splitWords(text, bad);
  }
  if (words.length === 0)
    throw bad('expected at least the program, e.g. "./bin/manager --leader-elect=false"');
  return words;
}

/** Shell-like splitting: whitespace separates words, '...' is literal, "..." takes \" and \\, \x is x. */
function splitWords(text: string, bad: (why: string) => Error): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "\\" && (text[i + 1] === '"' || text[i + 1] === "\\")) word += text.charAt(++i);
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= "";
    } else if (c === "\\" && i + 1 < text.length) {
      word = (word ?? "") + text.charAt(++i);
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? "") + c;
    }
  }
  if (quote) throw bad(`unclosed ${quote}`);
  if (word !== undefined) words.push(word);
  return words;
}
