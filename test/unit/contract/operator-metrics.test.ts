import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { loadContract } from "../../../src/contract/load-contract.js";
import { metricsTold } from "../../../src/contract/operator-metrics.js";
import { exampleCrd } from "../../support/crd-fixture.js";

const CRD = exampleCrd({ plural: "widgets", singular: "widget", kind: "Widget" }, { type: "object" });
const SAMPLE = { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: { size: 1 } };

async function load(operator: Record<string, unknown>) {
  const dir = await mkdtemp(join(tmpdir(), "rc-metrics-"));
  await writeFile(join(dir, "crd.yaml"), stringify(CRD));
  await writeFile(join(dir, "sample.yaml"), stringify(SAMPLE));
  const file = join(dir, "reconcile-conformance.yaml");
  await writeFile(file, stringify({ operator, crds: ["crd.yaml"], sample: "sample.yaml" }));
  return loadContract(file);
}

const loadError = (operator: Record<string, unknown>) =>
  load(operator).then(
    () => "loaded",
    (error: unknown) => (error as Error).message,
  );

describe("operator.metrics", () => {
  it("fills in the path and the settle, and tells each operator its port through args and env", async () => {
    const contract = await load({
      command: ["./manager"],
      metrics: {
        args: ["--metrics-bind-address=127.0.0.1:{port}", "--metrics-secure=false"],
        env: { X: "{port}" },
      },
    });
    if (contract.operator.mode !== "process") throw new Error("expected a process operator");
    const metrics = contract.operator.metrics;
    expect(metrics).toEqual({
      args: ["--metrics-bind-address=127.0.0.1:{port}", "--metrics-secure=false"],
      env: { X: "{port}" },
      path: "/metrics",
      settleMs: 300,
    });
    if (!metrics) throw new Error("expected metrics");
    expect(metricsTold(metrics, 20123)).toEqual({
      argv: ["--metrics-bind-address=127.0.0.1:20123", "--metrics-secure=false"],
      env: { X: "20123" },
    });
  });

  it("has none when the contract names none: silence alone decides", async () => {
    const contract = await load({ command: ["./manager"] });
    expect(contract.operator.mode === "process" && contract.operator.metrics).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      "no {port} anywhere: every operator would share one port",
      { command: ["./manager"], metrics: { args: ["--metrics-bind-address=:8080"] } },
      /operator\.metrics\.args: expected \{port\} in one of args or env/,
    ],
    [
      "a path without its slash",
      { command: ["./manager"], metrics: { args: ["--m={port}"], path: "metrics" } },
      /operator\.metrics\.path: expected a path such as "\/metrics"/,
    ],
    [
      "a settle that is no duration",
      { command: ["./manager"], metrics: { args: ["--m={port}"], settle: "soon" } },
      /operator\.metrics\.settle: expected a duration such as "300ms"/,
    ],
    [
      "a deployed operator",
      {
        deploy: { image: "example.com/op:ci", manifests: "config/default" },
        metrics: { args: ["--m={port}"] },
      },
      /operator\.metrics: only for command/,
    ],
  ])("refuses %s", async (_name, operator, message) => {
    expect(await loadError(operator)).toMatch(message);
  });
});
