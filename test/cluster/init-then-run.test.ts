import { cp, mkdir, mkdtemp, readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import type { RunReport } from "../../src/report/report-model.js";
import { runCli } from "../support/run-cli.js";
import { exampleDir } from "../support/webapp-example.js";

// A new user's first hour, as one test: the example operator laid out as kubebuilder lays a
// project out (config/crd/bases, config/samples, config/webhook, main.go and its module at the
// root), `init` on it, then `run` on the contract init wrote, unedited, to a verdict on every
// check, with the operator serving its admission webhooks.

/** The example operator's sources in a kubebuilder-style tree of its own. */
async function kubebuilderLayout(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "rc-init-run-"));
  for (const entry of ["go.mod", "go.sum", "main.go", "write_log.go", "api", "internal"]) {
    await cp(join(exampleDir, entry), join(dir, entry), { recursive: true });
  }
  await mkdir(join(dir, "config/crd/bases"), { recursive: true });
  await mkdir(join(dir, "config/samples"), { recursive: true });
  await cp(
    join(exampleDir, "crds/webapp.yaml"),
    join(dir, "config/crd/bases/demo.reconcile-conformance.dev_webapps.yaml"),
  );
  await cp(join(exampleDir, "samples/webapp.yaml"), join(dir, "config/samples/demo_v1alpha1_webapp.yaml"));
  await mkdir(join(dir, "config/webhook"), { recursive: true });
  await cp(join(exampleDir, "webhooks/manifests.yaml"), join(dir, "config/webhook/manifests.yaml"));
  return dir;
}

describe("init, then run on what it wrote", () => {
  it(
    "reaches a verdict on every check with the contract as init wrote it",
    { timeout: 1_200_000 },
    async () => {
      const dir = await kubebuilderLayout();
      const started = Date.now();
      const init = await runCli(["init", "--dir", dir]);
      expect(init.code, init.stderr).toBe(0);
      const initMs = Date.now() - started;
      const contract = parse(await readFile(join(dir, "reconcile-conformance.yaml"), "utf8")) as {
        operator: {
          command: string[];
          namespaced?: unknown;
          startTimeout: string;
          env: Record<string, string>;
          webhooks?: Record<string, unknown>;
          metrics?: Record<string, unknown>;
        };
      };
      // What init found: `go run .` (main.go has siblings), the namespace flag, a measured timeout.
      expect(contract.operator.command.slice(0, 3)).toEqual(["go", "run", "."]);
      expect(contract.operator.namespaced).toEqual({ arg: "--watch-namespace" });
      expect(init.stderr).toMatch(/init: built in [\d.]+ s/);
      // The webhooks it found, kept on, with the flags main.go defines for their port and certificate.
      expect(contract.operator.env).toEqual({ ENABLE_WEBHOOKS: "true" });
      expect(contract.operator.webhooks).toEqual({
        manifests: ["config/webhook/manifests.yaml"],
        port: 9443,
        portArg: "--webhook-port",
        certDirArg: "--webhook-cert-path",
        conversion: [],
      });
      // Its metrics flag, given a free port per process: the waits are decided by its work queues.
      expect(contract.operator.metrics).toEqual({ args: ["--metrics-bind-address=127.0.0.1:{port}"] });

      const reportDir = join(dir, "report");
      const run = await runCli([
        "run",
        "--config",
        join(dir, "reconcile-conformance.yaml"),
        "--report-dir",
        reportDir,
      ]);
      const totalMs = Date.now() - started;
      const report = JSON.parse(await readFile(join(reportDir, "report.json"), "utf8")) as RunReport;
      // The reference operator: every check it can be judged by passes, whatever init chose for updates.
      const statuses = Object.fromEntries(report.checks.map((c) => [c.id, c.status]));
      expect(run.code, run.stderr.slice(-3000)).toBe(0);
      expect(
        Object.values(statuses).every((s) => s === "passed" || s === "skipped"),
        JSON.stringify(statuses),
      ).toBe(true);
      expect(report.checks.length).toBe(22);
      // The operator served its webhooks: the sample of a scenario was defaulted and validated.
      const logs = await readdir(join(reportDir, "scenarios/drift"), { recursive: true });
      const first = logs.find((f) => f.endsWith("operator-1.log")) ?? "";
      expect(await readFile(join(reportDir, "scenarios/drift", first), "utf8")).toMatch(
        /webhook\s+validated\s+\{"operation": "create"/,
      );
      const quiescence = report.checks.flatMap((c) =>
        c.scenarios.flatMap((sc) => (sc.evidence?.notes ?? []).filter((n) => n.startsWith("quiescence: "))),
      );
      expect(
        quiescence.some((n) => /by the operator's work queues/.test(n)),
        quiescence.join("\n"),
      ).toBe(true);
      console.log(
        `init ${(initMs / 1000).toFixed(1)} s, init to the first verdict's report ${(totalMs / 1000).toFixed(1)} s`,
      );
    },
  );
});
