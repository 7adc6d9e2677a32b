import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SELECTABLE_SUITES as SCHEMA_SUITES } from "../../../src/contract/contract-schema.js";
import { KNOWN_CHECKS, SUITES } from "../../../src/suites/index.js";
import { SUITE_NAMES } from "../../../src/suites/suite-names.js";

// The registry is the one list of checks: a check's id is its file's path and its docs page's, the
// README's table follows it, and a check file that is not registered is a failing test, not a
// silent gap.
const root = join(import.meta.dirname, "../../..");

/** The sections every docs/checks page has, in this order (a "How to fix" may name its framework). */
const SECTIONS = [
  /^\*\*What it does\.\*\*/m,
  /^\*\*Passes when\*\*/m,
  /^\*\*Why it matters\.\*\*/m,
  /^\*\*How to fix/m,
  /^\*\*Evidence\.\*\*/m,
];

describe("the suites registry", () => {
  it("has every suite of SUITE_NAMES once, in that order, and the schema offers all but the cluster's", () => {
    expect(SUITES.map((s) => s.name)).toEqual([...SUITE_NAMES]);
    expect([...SCHEMA_SUITES]).toEqual(SUITE_NAMES.filter((n) => n !== "cluster"));
  });

  it("gives each check a unique id under its suite's name", () => {
    const ids = KNOWN_CHECKS.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const suite of SUITES) {
      expect(suite.checks.length, suite.name).toBeGreaterThan(0);
      for (const check of suite.checks) expect(check.id).toMatch(new RegExp(`^${suite.name}/[a-z-]+$`));
    }
  });

  it.each(KNOWN_CHECKS.map((c) => [c.id, c] as const))(
    "%s is defined in src/suites/<id>.ts",
    async (id, check) => {
      const module = (await import(join(root, "src/suites", `${id}.ts`))) as Record<string, unknown>;
      expect(Object.values(module)).toContain(check);
    },
  );

  it("registers every check file of every suite folder", () => {
    for (const suite of SUITES) {
      const dir = join(root, "src/suites", suite.name);
      const defined = readdirSync(dir)
        .filter((f) => f.endsWith(".ts") && f !== "index.ts")
        .filter((f) => /defineCheck[<(]/.test(readFileSync(join(dir, f), "utf8")))
        .map((f) => `${suite.name}/${f.replace(/\.ts$/, "")}`);
      expect(defined.sort(), suite.name).toEqual(suite.checks.map((c) => c.id).sort());
    }
  });

  it.each(KNOWN_CHECKS.map((c) => [c.id, c] as const))(
    "%s has its docs page with the required sections",
    (id, check) => {
      const file = join(root, "docs/checks", `${id}.md`);
      expect(existsSync(file), file).toBe(true);
      const page = readFileSync(file, "utf8");
      expect(page.split("\n")[0]).toBe(`# ${id} (${check.level})`);
      const positions = SECTIONS.map((section) => page.search(section));
      expect(
        positions.every((p) => p > 0),
        `${file} lacks a section of ${SECTIONS.join(", ")}`,
      ).toBe(true);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    },
  );

  it("has no docs page for a check that does not exist", () => {
    const pages = readdirSync(join(root, "docs/checks"), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".md"))
      .map((f) => f.replace(/\.md$/, ""));
    expect(pages.sort()).toEqual(KNOWN_CHECKS.map((c) => c.id).sort());
  });

  it("is the README's checks table: every check in order, with its level and docs link", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8").split("\n");
    const start = readme.findIndex((l) => /^\|\s*id\s*\|\s*level\s*\|/.test(l));
    expect(start).toBeGreaterThan(0);
    const rows = [];
    for (const line of readme.slice(start + 2)) {
      if (!line.startsWith("|")) break;
      rows.push(
        line
          .slice(1, -1)
          .split("|")
          .map((cell) => cell.trim()),
      );
    }
    expect(rows.map(([id, level]) => [id, level])).toEqual(
      KNOWN_CHECKS.map((c) => [`[\`${c.id}\`](docs/checks/${c.id}.md)`, c.level]),
    );
    for (const [id, , what] of rows) expect(what, id).not.toBe("");
  });
});
