import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseCandidates, fieldName } from "../../src/contract/spec-candidates.js";
import type { KubeObject } from "../../src/kube/kube-client.js";
import type { RunReport } from "../../src/report/report-model.js";
import { checkCandidates } from "../../src/scenario/spec-exploration.js";
import { pollUntil } from "../../src/util/poll.js";
import { asRecord } from "../../src/util/records.js";
import { runExampleOperator } from "../support/example-run.js";
import { createSettledNamespace, startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import { exampleOperatorBinary } from "../support/webapp-example.js";

// Spec exploration against a real API server: the candidates a schema with patterns, formats, CEL
// rules and list-map keys allows, checked in dry runs (a refusal is dropped with the server's
// reason, never used); and, on the example operator, the generated updates judged by the
// differential check: the reference passes them all, a mutant that never prunes a removed setting
// fails the one that removes it, and nothing else.

let cluster: TestCluster;
let binary: string;

beforeAll(async () => {
  binary = exampleOperatorBinary();
  cluster = await startTestCluster("rc-generated");
});

afterAll(async () => {
  cluster?.client.close();
  await cluster?.provider.delete();
});

const differential = (report: RunReport) =>
  report.checks.find((c) => c.id === "differential/update-equals-creation")?.scenarios ?? [];

describe("candidates checked by the API server", () => {
  it(
    "drops what the server refuses or keeps unchanged, with its reason, and uses none of it",
    { timeout: 120_000 },
    async () => {
      const crd = parse(
        await readFile(join(import.meta.dirname, "../fixtures/exploration/gadget-crd.yaml"), "utf8"),
      ) as KubeObject;
      await cluster.client.create(crd);
      const ref = {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        name: crd.metadata?.name ?? "",
      };
      await pollUntil(
        async () => {
          const conditions = asRecord((await cluster.client.get(ref)).status).conditions;
          const established = Array.isArray(conditions)
            ? conditions.some((c) => asRecord(c).type === "Established" && asRecord(c).status === "True")
            : false;
          return established ? { done: true, value: undefined } : { done: false, reason: "not Established" };
        },
        { description: "the gadget CRD to be Established", timeoutMs: 30_000 },
      );
      await createSettledNamespace(cluster.client, "rc-explore-gadgets");
      const base: KubeObject = {
        apiVersion: "fixtures.reconcile-conformance.dev/v1",
        kind: "Gadget",
        metadata: { name: "g" },
        spec: {
          name: "web",
          endpoint: "https://gadgets.example/hook",
          size: 5,
          limit: 5,
          mode: "a",
          ports: [{ name: "http", port: 80 }],
          tags: ["blue"],
          labels: { team: "x" },
        },
      };
      const schema = asRecord(
        asRecord(asRecord(asRecord((crd.spec as { versions: unknown[] }).versions[0]).schema).openAPIV3Schema)
          .properties,
      ).spec as Record<string, unknown>;
      const checked = await checkCandidates(cluster.client, "rc-explore-gadgets", base, schema);
      if (!("results" in checked)) throw new Error(`the base was refused: ${checked.refusedBase}`);
      const refused = Object.fromEntries(
        checked.results.flatMap((c) => (c.accepted ? [] : [[c.candidate.description, c.reason]])),
      );
      // CEL at the spec's level and at a field's: refused, with the rule's message.
      expect(refused["spec.size: 5 → 6"]).toMatch(/size must not exceed limit/);
      expect(refused['spec.mode: "a" → "b"']).toMatch(/mode b is retired/);
      // The server defaults `enabled` (true): removing it changes nothing it keeps.
      expect(refused["spec.enabled: removed (was true)"]).toMatch(/^changes nothing the API server keeps/);
      const accepted = checked.results.flatMap((c) => (c.accepted ? [c.candidate.description] : []));
      expect(accepted).toEqual(
        expect.arrayContaining([
          "spec.limit: 5 → 6",
          "spec.enabled: true → false",
          "spec.ports: element added (a copy of element 0, varied)",
          'spec.ports[0].name: "http" → "http-updated"',
          "spec.ports[0].port: 80 → 81",
          'spec.tags: element 0 removed ("blue")',
          "spec.labels: key team removed",
        ]),
      );
      // A set at its maxItems gets no element; a map at its maxProperties no key; a pattern and a
      // format are left alone, with why.
      expect(accepted.some((d) => d.startsWith("spec.tags: element added"))).toBe(false);
      expect(accepted.some((d) => d.startsWith("spec.labels: key") && d.endsWith("added"))).toBe(false);
      expect(checked.leftAlone).toEqual(
        expect.arrayContaining([
          { field: "spec.name", why: "a pattern the kit cannot satisfy with certainty" },
          { field: "spec.endpoint", why: "format uri" },
        ]),
      );
      // Only accepted candidates are chosen, whatever the budget and seed.
      const chosen = chooseCandidates(
        checked.results.flatMap((c) => (c.accepted ? [c.candidate] : [])),
        { budget: 100, seed: 3, shows: () => true },
      );
      expect(chosen.map((c) => c.description).filter((d) => d in refused)).toEqual([]);
      expect(new Set(chosen.map((c) => fieldName(c.path)))).not.toContain("spec.size");
    },
  );
});

describe("differential/update-equals-creation with generated updates", () => {
  it(
    "the reference ends as a creation for every generated update; a field with no visible effect is noted",
    { timeout: 600_000 },
    async () => {
      const report = await runExampleOperator(cluster, binary, {
        strict: true,
        suites: ["differential"],
        parallel: 4,
      });
      const generated = differential(report).filter((s) => s.target.startsWith("generated update"));
      expect(generated).toHaveLength(8);
      expect(differential(report).every((s) => s.status === "passed")).toBe(true);
      expect(report.exploration).toMatchObject({ max: 8, seed: 1, refused: [] });
      expect(report.exploration?.chosen).toEqual(generated.map((s) => s.target));
      // The Service's affinity is None whether the spec says so or not.
      expect(report.exploration?.noEffect).toEqual([
        'spec.service: removed (was {"sessionAffinity":"None"})',
      ]);
    },
  );

  it(
    "settings-never-pruned fails only the generated update that removes a setting, its diff sides named",
    { timeout: 600_000 },
    async () => {
      const report = await runExampleOperator(cluster, binary, {
        bug: "settings-never-pruned",
        strict: true,
        suites: ["differential"],
        parallel: 4,
      });
      const failed = differential(report).filter((s) => s.status !== "passed");
      expect(failed.map((s) => [s.target, s.status])).toEqual([
        ["generated update 6 (spec.settings: key greeting-style removed)", "failed"],
      ]);
      expect(failed[0]?.evidence?.diffs).toEqual([
        {
          object: "ConfigMap/registration-<uid>",
          path: 'data["setting.greeting-style"]',
          expected: "plain",
          actual: undefined,
          sides: { expected: "updated to the spec", actual: "created with the spec" },
        },
      ]);
      // The rerun command names it, and the same seed makes the same choice.
      expect(failed[0]?.rerun).toContain(
        "--scenario 'differential/update-equals-creation#generated update 6",
      );
    },
  );
});

describe("the API server's dry run of every update, before it is written", () => {
  const verdicts = (report: RunReport) =>
    differential(report).map((s) => ({ target: s.target, status: s.status, message: s.message }));

  it(
    "an update that changes nothing the server keeps leaves the check inconclusive, naming it",
    { timeout: 600_000 },
    async () => {
      // Update 2 names a field the schema does not have: pruned, it changes nothing.
      const report = await runExampleOperator(cluster, binary, {
        strict: true,
        suites: ["differential"],
        contract: {
          updates: [{ spec: { replicas: 2 } }, { spec: { replicaCount: 3 } }],
          generatedUpdates: false,
        },
        parallel: 4,
      });
      const [verdict, ...others] = verdicts(report);
      expect(others).toEqual([]);
      expect(verdict).toMatchObject({ target: "reference state", status: "inconclusive" });
      expect(verdict?.message).toMatch(
        /^the contract's update 2 changes nothing the API server keeps: its dry run answered the custom resource as it was/,
      );
    },
  );

  it("a refusal names the update and the server's reason", { timeout: 600_000 }, async () => {
    // Below the schema's minimum of 1.
    const report = await runExampleOperator(cluster, binary, {
      strict: true,
      suites: ["differential"],
      contract: { updates: [{ spec: { port: 0 } }], generatedUpdates: false },
      parallel: 4,
    });
    const [verdict, ...others] = verdicts(report);
    expect(others).toEqual([]);
    expect(verdict).toMatchObject({ target: "reference state", status: "inconclusive" });
    expect(verdict?.message).toMatch(
      /^the API server refused the contract's update 1 in a dry run: .*spec\.port/,
    );
  });
});
