import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { nodeIsRecentEnough, nodeTooOldMessage, REQUIRED_NODE } from "../../src/node-requirement.js";

describe("the Node the CLI needs", () => {
  it.each([
    ["20.20.2", false],
    ["v22.18.9", false],
    ["22.19.0", true],
    ["v22.19.0", true],
    ["22.20.0", true],
    ["23.0.0", true],
    ["24.22.3", true],
    ["21.99.99", false],
  ])("%s is recent enough: %s", (version, ok) => {
    expect(nodeIsRecentEnough(version)).toBe(ok);
  });

  it("is package.json's engines.node", async () => {
    const pkg = JSON.parse(await readFile("package.json", "utf8")) as { engines: { node: string } };
    expect(`>=${REQUIRED_NODE.replace(/\.0$/, "")}`).toBe(pkg.engines.node);
  });

  it("says which Node it needs, which it found and how to get one", () => {
    const message = nodeTooOldMessage("v20.20.2", "/usr/bin/node");
    expect(message).toMatch(
      /^reconcile-conformance needs Node\.js 22\.19\.0 or later; this is Node\.js 20\.20\.2 \(\/usr\/bin\/node\)\./,
    );
    expect(message).toContain("npx -p node@24 -p reconcile-conformance reconcile-conformance <command>");
  });
});
