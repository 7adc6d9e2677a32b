import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/report/report-model.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import { runExampleOperator } from "../support/example-run.js";
import { exampleDir, exampleOperatorBinary } from "../support/webapp-example.js";

// Webhooks in process mode, against a real kube-apiserver: the example operator started with
// --enable-webhooks serves its defaulting and validating webhooks itself; the kit installs each
// scenario's copy of webhooks/manifests.yaml pointing at it, with a certificate it made.

let cluster: TestCluster;
let binary: string;

beforeAll(async () => {
  binary = exampleOperatorBinary();
  cluster = await startTestCluster("rc-webhooks");
});

afterAll(async () => {
  cluster?.client.close();
  await cluster?.provider.delete();
});

const MANIFESTS = join(exampleDir, "webhooks/manifests.yaml");

/** The example's operator section with its webhooks on, as reconcile-conformance.webhooks.yaml has it, on the built binary. */
const withWebhooks = (webhooks: Record<string, unknown>, args: string[] = ["--enable-webhooks"]) => ({
  operator: {
    command: [binary, "--leader-elect=false", ...args],
    namespaced: { arg: "--watch-namespace" },
    startTimeout: "20s",
    webhooks: { manifests: MANIFESTS, ...webhooks },
  },
});

/** Every operator log of every scenario under `workDir`, by scenario folder. */
async function operatorLogs(workDir: string): Promise<Map<string, string>> {
  const logs = new Map<string, string>();
  for (const suite of await readdir(workDir, { withFileTypes: true })) {
    if (!suite.isDirectory()) continue;
    for (const scenario of await readdir(join(workDir, suite.name), { withFileTypes: true })) {
      if (!scenario.isDirectory() || !scenario.name.startsWith("rc-")) continue;
      const folder = join(workDir, suite.name, scenario.name);
      const files = (await readdir(folder)).filter((f) => /^operator-\d+\.log$/.test(f));
      const texts = await Promise.all(files.map((f) => readFile(join(folder, f), "utf8")));
      logs.set(`${suite.name}/${scenario.name}`, texts.join("\n"));
    }
  }
  return logs;
}

const statuses = (report: RunReport) => Object.fromEntries(report.checks.map((c) => [c.id, c.status]));

describe("webhooks served by the operator process", () => {
  it(
    "pass the whole default run, every scenario's sample defaulted and validated by its own operator",
    { timeout: 900_000 },
    async () => {
      const workDir = await mkdtemp(join(tmpdir(), "rc-webhooks-run-"));
      const report = await runExampleOperator(cluster, binary, {
        strict: true,
        suites: [
          "cluster",
          "drift",
          "status-stability",
          "idempotency",
          "conflict",
          "staleness",
          "differential",
          "deletion",
        ],
        contract: withWebhooks({ portArg: "--webhook-port", certDirArg: "--webhook-cert-path" }),
        workDir,
      });
      expect(report.checks.length).toBe(22);
      // Every check passed, the deletion suite's on the reference's finalizer included; its clock
      // makes nothing, so there is no tick to judge.
      expect(statuses(report), JSON.stringify(statuses(report))).toEqual(
        Object.fromEntries(
          report.checks.map((c) => [c.id, c.id === "idempotency/no-tick-overwrite" ? "skipped" : "passed"]),
        ),
      );
      const logs = await operatorLogs(workDir);
      expect(logs.size).toBeGreaterThan(30);
      for (const [scenario, text] of logs) {
        // Each scenario's operator served on a port of its own, with the kit's certificate, and the
        // API server called it for the sample the kit created in that scenario's namespace.
        const namespace = scenario.split("/")[1] ?? "";
        // OPERATOR_PORT_WINDOW: 15000-19999.
        expect(text, scenario).toMatch(/Serving webhook server\s+\{"host": "", "port": (1[5-9]\d{3})\}/);
        expect(text, scenario).toContain(`"webapp": "${namespace}/hello"`);
        expect(text, scenario).toMatch(/webhook\s+defaulted/);
        expect(text, scenario).toMatch(/webhook\s+validated\s+\{"operation": "create"/);
        // No scenario's webhooks called another scenario's operator.
        expect(text.match(/"webapp": "rc-[^"/]+\/hello"/g)?.every((m) => m.includes(namespace))).toBe(true);
      }
      // The copies went with their scenarios.
      for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]) {
        const left = await cluster.client.list("admissionregistration.k8s.io/v1", kind);
        expect(left.map((o) => o.metadata?.name)).toEqual([]);
      }
    },
  );

  it(
    "on the one port and controller-runtime's default directory (an unmodified kubebuilder main.go): one scenario at a time",
    { timeout: 300_000 },
    async () => {
      const workDir = await mkdtemp(join(tmpdir(), "rc-webhooks-default-"));
      const report = await runExampleOperator(cluster, binary, {
        strict: true,
        suites: ["idempotency"],
        checks: ["idempotency/crash-after-create"],
        contract: withWebhooks({}),
        workDir,
      });
      expect(statuses(report)).toEqual({ "idempotency/crash-after-create": "passed" });
      const logs = [...(await operatorLogs(workDir)).values()].join("\n");
      expect(logs).toContain(`"port": 9443}`);
      // The certificate was where controller-runtime looks when TMPDIR is the run's own.
      expect(logs).toContain(
        join(workDir, "webhook-serving/operator-tmp/k8s-webhook-server/serving-certs/tls.crt"),
      );
    },
  );

  it(
    "report a sample the validating webhook denies as inconclusive, naming the webhook and its reason",
    { timeout: 300_000 },
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "rc-webhooks-denied-"));
      const sample = parse(await readFile(join(exampleDir, "samples/webapp.yaml"), "utf8")) as {
        spec: Record<string, unknown>;
      };
      const file = join(dir, "too-many.yaml");
      await writeFile(file, stringify({ ...sample, spec: { ...sample.spec, replicas: 500 } }));
      const report = await runExampleOperator(cluster, binary, {
        strict: true,
        suites: ["drift", "status-stability"],
        checks: ["drift/deleted-child", "status-stability/no-avoidable-writes"],
        contract: { ...withWebhooks({ portArg: "--webhook-port" }), sample: file },
      });
      const scenarios = report.checks.flatMap((c) => c.scenarios);
      expect(scenarios.length).toBeGreaterThan(0);
      for (const scenario of scenarios) {
        expect(scenario.status).toBe("inconclusive");
        expect(scenario.message).toContain(
          "the admission webhook vwebapp-v1alpha1.demo.reconcile-conformance.dev denied it: spec.replicas: 500 is more than 50",
        );
      }
    },
  );

  it(
    "say so when the operator does not serve them where the contract says",
    { timeout: 300_000 },
    async () => {
      const report = await runExampleOperator(cluster, binary, {
        strict: true,
        suites: ["drift"],
        checks: ["drift/deleted-child"],
        // Webhooks not switched on: it watches its custom resource, and nothing answers on the port.
        contract: withWebhooks({ portArg: "--webhook-port" }, []),
      });
      const [scenario] = report.checks.flatMap((c) => c.scenarios);
      expect(scenario?.status).toBe("inconclusive");
      expect(scenario?.message).toMatch(
        /its webhook server did not answer on 127\.0\.0\.1:\d+ within 20 s \(nothing listens there\): is operator\.webhooks\.port the port its webhook server listens on, and are its webhooks switched on/,
      );
    },
  );
});
