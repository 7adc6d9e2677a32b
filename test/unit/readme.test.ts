import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

// The README's tables of the Action's inputs and outputs are written by hand for reading on GitHub;
// this keeps them equal to action.yml, the definition the runner uses.
const root = join(import.meta.dirname, "../..");
const readme = readFileSync(join(root, "README.md"), "utf8");
const action = parse(readFileSync(join(root, "action.yml"), "utf8")) as {
  inputs: Record<string, { description: string; default: string }>;
  outputs: Record<string, { description: string }>;
};

/** The rows of the Markdown table whose header starts with `| <first> |`, as trimmed cells. */
function table(first: string): string[][] {
  const lines = readme.split("\n");
  const start = lines.findIndex((l) => new RegExp(`^\\|\\s*${first}\\s*\\|`).test(l));
  if (start < 0) throw new Error(`README.md has no table whose first column is "${first}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** A cell as plain text: code marks and Markdown escapes taken off, whitespace folded. */
const plain = (cell: string) => cell.replace(/`/g, "").replace(/\\([<|*_])/g, "$1");
const folded = (text: string) => text.replace(/\s+/g, " ").trim();

describe("README.md", () => {
  it("lists every input of action.yml, in order, with its default and description", () => {
    const rows = table("input");
    expect(rows.map(([name]) => plain(name ?? ""))).toEqual(Object.keys(action.inputs));
    for (const [name, fallback, description] of rows) {
      const input = action.inputs[plain(name ?? "")];
      expect(plain(fallback ?? ""), name).toBe(input?.default);
      expect(plain(description ?? ""), name).toBe(plain(folded(input?.description ?? "")));
    }
  });

  it("lists every output of action.yml, in order, with its description", () => {
    const rows = table("output");
    expect(rows.map(([name]) => plain(name ?? ""))).toEqual(Object.keys(action.outputs));
    for (const [name, description] of rows) {
      expect(plain(description ?? ""), name).toBe(
        folded(action.outputs[plain(name ?? "")]?.description ?? ""),
      );
    }
  });

  it("starts with the two commands a newcomer needs", () => {
    const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    expect(
      block
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split("#")[0]?.trim()),
    ).toEqual(["bash scripts/demo.sh", "bash scripts/test.sh"]);
    expect(readme.indexOf("```sh")).toBeLessThan(readme.indexOf("\n## "));
  });
});
