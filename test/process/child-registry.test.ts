import { execFile } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isProcessAlive } from "../../src/process/process-table.js";

describe("child registry", () => {
  it("kills tracked process groups when the kit dies of an uncaught error", async () => {
    const script = join(import.meta.dirname, "../support/crash-with-child.ts");
    const tsx = join(import.meta.dirname, "../../node_modules/.bin/tsx");
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = execFile(tsx, [script], (_error, out) => resolve({ code: child.exitCode, stdout: out }));
    });
    const pid = Number(stdout.trim());
    expect(code).not.toBe(0);
    expect(pid).toBeGreaterThan(0);
    expect(isProcessAlive(pid)).toBe(false);
  });
});
