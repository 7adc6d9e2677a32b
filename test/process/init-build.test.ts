import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { initCommand } from "../../src/cli/init-command.js";
import { zxCommandRunner } from "../../src/process/command-runner.js";
import { commandContext } from "../support/command-context.js";
import { exampleDir } from "../support/webapp-example.js";

// init builds a `go run` operator once, for real: a module of the standard library only, so the
// build needs no module download.

async function tinyOperator(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "rc-init-build-"));
  const files: Record<string, string> = {
    "go.mod": "module example.com/tiny\n\ngo 1.22\n",
    "cmd/main.go":
      'package main\n\nimport (\n\t"flag"\n\t"os"\n)\n\nfunc main() {\n\tflag.Bool("leader-elect", false, "")\n\tflag.Parse()\n\t_ = os.Getenv("TINY_MODE")\n}\n',
    "config/crd/bases/demo.reconcile-conformance.dev_webapps.yaml": await readFile(
      join(exampleDir, "crds/webapp.yaml"),
      "utf8",
    ),
    "config/samples/webapp.yaml": await readFile(join(exampleDir, "samples/webapp.yaml"), "utf8"),
  };
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(dir, name, ".."), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

function context() {
  const lines: string[] = [];
  const { context: made } = commandContext({
    runner: zxCommandRunner,
    environment: { env: {}, homeDir: "/nonexistent" },
    logger: { info: (m) => lines.push(m), warn: (m) => lines.push(`warning: ${m}`), debug: () => {} },
  });
  return { context: made, log: () => lines.join("\n") };
}

describe("init of a go run operator", () => {
  it("builds it once and sets startTimeout from the build's time", { timeout: 300_000 }, async () => {
    const dir = await tinyOperator();
    const { context: ctx, log } = context();
    await initCommand(["--dir", dir], ctx);
    expect(log()).toMatch(/init: building the operator once \(go build \.\/cmd\/main\.go\)/);
    expect(log()).toMatch(/init: built in \d+(\.\d)? s/);
    const text = await readFile(join(dir, "reconcile-conformance.yaml"), "utf8");
    expect((parse(text) as { operator: { startTimeout: string } }).operator.startTimeout).toBe("180s");
    expect(text).toMatch(
      /# init built the operator in \d+(\.\d)? s; a first `go run` where Go's build cache is cold/,
    );
    expect(text).toMatch(/# TINY_MODE: read in cmd\/main\.go \(os\.Getenv\)/);
  });

  it("says why when the build fails, and keeps the unmeasured timeout", { timeout: 300_000 }, async () => {
    const dir = await tinyOperator();
    await writeFile(join(dir, "cmd/main.go"), "package main\n\nfunc main() { undefinedCall() }\n");
    const { context: ctx, log } = context();
    await initCommand(["--dir", dir], ctx);
    expect(log()).toMatch(
      /warning: init: go build \.\/cmd\/main\.go failed \(exit 1\) after [\d.]+ s:\n {2}[\s\S]*undefined: undefinedCall/,
    );
    const text = await readFile(join(dir, "reconcile-conformance.yaml"), "utf8");
    expect(text).toContain("# Longer here: the first `go run` compiles the operator.");
  });

  it("builds nothing with --no-build", async () => {
    const dir = await tinyOperator();
    const { context: ctx, log } = context();
    await initCommand(["--dir", dir, "--no-build"], ctx);
    expect(log()).not.toContain("building the operator");
  });
});
