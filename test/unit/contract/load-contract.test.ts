import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { durationMs } from "../../../src/contract/contract-schema.js";
import { loadContract } from "../../../src/contract/load-contract.js";
import { sampleWithSpec, specPath, updateName } from "../../../src/contract/spec-path.js";
import { UsageError } from "../../../src/errors.js";
import {
  REFERENCE_FILE,
  renderContractReference,
  renderSchema,
  SCHEMA_FILE,
} from "../../../scripts/generate-schema.js";
import { exampleCrd } from "../../support/crd-fixture.js";
import { exampleDir } from "../../support/webapp-example.js";
import { deployedSetup } from "../../../src/operator/deployed/deployed-operator.js";
import { operatorManifests } from "../../../src/operator/deployed/manifests.js";

const CRD = exampleCrd({ plural: "widgets", singular: "widget", kind: "Widget" }, { type: "object" });
const SAMPLE = { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: { size: 1 } };

/** A contract directory with a CRD and a sample; `contract` is written as YAML (or as text when a string). */
async function contractDir(contract: unknown, files: Record<string, unknown> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "rc-contract-"));
  const all = { "crds/widget.yaml": CRD, "sample.yaml": SAMPLE, ...files };
  for (const [name, value] of Object.entries(all)) {
    await import("node:fs/promises").then((fs) => fs.mkdir(join(dir, name, ".."), { recursive: true }));
    await writeFile(join(dir, name), typeof value === "string" ? value : stringify(value));
  }
  const file = join(dir, "reconcile-conformance.yaml");
  await writeFile(file, typeof contract === "string" ? contract : stringify(contract));
  return file;
}

const minimal = {
  operator: { command: ["./manager", "--leader-elect=false"] },
  crds: ["crds/widget.yaml"],
  sample: "sample.yaml",
};

async function loadError(contract: unknown, files?: Record<string, unknown>): Promise<string> {
  const error = await loadContract(await contractDir(contract, files)).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(UsageError);
  expect((error as UsageError).exitCode).toBe(2);
  return (error as Error).message;
}

describe("loadContract", () => {
  it("fills every default into the minimal form and resolves paths against the contract's directory", async () => {
    const file = await contractDir(minimal);
    const contract = await loadContract(file);
    const dir = join(file, "..");
    expect(contract).toMatchObject({
      file,
      operator: {
        mode: "process",
        argv: ["./manager", "--leader-elect=false"],
        cwd: dir,
        env: {},
        passThroughEnv: [],
        startTimeoutMs: 60_000,
      },
      crds: [{ file: join(dir, "crds/widget.yaml"), object: CRD }],
      sample: { file: join(dir, "sample.yaml"), object: SAMPLE },
      customResource: { group: "example.com", version: "v1", resource: "widgets", kind: "Widget" },
      images: [],
      updates: [],
      readiness: { kind: "conditions" },
      quietPeriodMs: 1500,
      timeouts: { convergeMs: 60_000, crdEstablishedMs: 30_000 },
      ignoreWrites: [
        { group: "", resource: "events" },
        { group: "events.k8s.io", resource: "events" },
        { group: "coordination.k8s.io", resource: "leases" },
      ],
      drift: { include: [], exclude: [] },
      suites: [
        "drift",
        "status-stability",
        "idempotency",
        "conflict",
        "staleness",
        "differential",
        "deletion",
      ],
      promises: [],
      waivers: [],
    });
  });

  it("resolves promises and waivers, and names the field path of each mistake in them", async () => {
    const contract = await loadContract(
      await contractDir({
        ...minimal,
        promises: [
          {
            kind: "Widget",
            volatile: [
              { path: "status.lastHeartbeatTime", reason: "heartbeat" },
              { path: 'metadata.annotations["example.com/config-hash"]', reason: "hash of the config" },
            ],
          },
          { kind: "ConfigMap", name: "session-*", keeps: ["resourceVersion"], reason: "rotated hourly" },
        ],
        waivers: [
          { check: "drift/managed-field", target: "Service/*", reason: "fix in #7", until: "2027-01-31" },
        ],
      }),
    );
    expect(contract.promises).toEqual([
      {
        rule: "promises[0]",
        kind: "Widget",
        keeps: ["resourceVersion", "uid", "generation"],
        volatile: [
          {
            path: [{ field: "status" }, { field: "lastHeartbeatTime" }],
            text: "status.lastHeartbeatTime",
            reason: "heartbeat",
            rule: "promises[0]",
          },
          {
            path: [{ field: "metadata" }, { field: "annotations" }, { field: "example.com/config-hash" }],
            text: 'metadata.annotations["example.com/config-hash"]',
            reason: "hash of the config",
            rule: "promises[0]",
          },
        ],
      },
      {
        rule: "promises[1]",
        kind: "ConfigMap",
        name: "session-*",
        keeps: ["resourceVersion"],
        reason: "rotated hourly",
        volatile: [],
      },
    ]);
    expect(contract.waivers).toEqual([
      {
        rule: "waivers[0]",
        check: "drift/managed-field",
        target: "Service/*",
        reason: "fix in #7",
        until: "2027-01-31",
      },
    ]);

    const message = await loadError({
      ...minimal,
      promises: [
        { kind: "Widget", keeps: ["uid"] },
        { kind: "Widget", keeps: ["name"], reason: "x" },
        { kind: "Widget", volatile: [{ path: "status..time", reason: "x" }, { path: "status.time" }] },
        { kind: "Widget", volatile: [{ path: "status.conditions[type=]", reason: "x" }] },
      ],
      waivers: [
        { check: "drift", reason: "x" },
        { check: "drift/managed-field", reason: "  " },
        { check: "drift/managed-field", reason: "x", until: "31.12.2026" },
        { check: "drift/managed-field", reason: "x", until: "2026-02-30" },
      ],
    });
    expect(message).toContain(
      "promises[0].reason: expected a reason: keeps leaves out resourceVersion, generation",
    );
    expect(message).toContain("promises[1].keeps[0]: expected one of resourceVersion, uid, generation");
    expect(message).toContain(
      'promises[2].volatile[0].path: not a field path: expected a field name (use ["..."] for keys with other characters) at character 8 of "status..time"',
    );
    expect(message).toContain(
      "promises[2].volatile[1].reason: expected a reason: why the operator rewrites this field",
    );
    expect(message).toContain("promises[3].volatile[0].path: not a field path:");
    expect(message).toContain(
      'waivers[0].check: expected a check id, e.g. "status-stability/no-avoidable-writes"',
    );
    expect(message).toContain("waivers[1].reason: expected a reason: why this failure is accepted for now");
    expect(message).toContain('waivers[2].until: expected a date such as "2026-12-31"');
    expect(message).toContain("waivers[3].until: not a real date");
  });

  it("takes the operator deployed from its image and manifests instead of a command", async () => {
    const file = await contractDir({
      ...minimal,
      operator: {
        deploy: { image: "example.com/widget-operator:ci", manifests: "config/default" },
        namespaced: { arg: "--watch-namespace" },
      },
    });
    const contract = await loadContract(file);
    expect(contract.operator).toEqual({
      mode: "deployed",
      deploy: { image: "example.com/widget-operator:ci", manifests: ["config/default"], loadImage: true },
      dir: join(file, ".."),
      env: {},
      startTimeoutMs: 60_000,
      namespaced: { arg: "--watch-namespace" },
    });
  });

  it.each([
    [
      { command: ["./manager"], deploy: { image: "op:ci", manifests: "m.yaml" } },
      "operator.deploy: expected either command",
    ],
    [{ env: { A: "b" } }, "operator.command: expected command"],
    [
      { deploy: { image: "op:ci", manifests: "m.yaml" }, workingDir: "src" },
      "operator.workingDir: only for command",
    ],
    [{ deploy: { image: "Op:CI", manifests: "m.yaml" } }, "operator.deploy.image: expected the image"],
  ])("refuses operator %j, naming the field", async (operator, message) => {
    expect(await loadError({ ...minimal, operator })).toContain(message);
  });

  it("takes the images to load into kind, and refuses one that is not an image reference", async () => {
    const contract = await loadContract(
      await contractDir({ ...minimal, images: ["example.com/web:ci", "pause"] }),
    );
    expect(contract.images).toEqual(["example.com/web:ci", "pause"]);
    expect(await loadError({ ...minimal, images: ["web:ci", "Web:CI"] })).toContain(
      "images[1]: expected a local image your workflow builds or pulls",
    );
    expect(await loadError({ ...minimal, images: "web:ci" })).toContain(
      "images: expected a list of image references",
    );
  });

  it("loads the example operator's deployed-mode contract, whose manifests name one operator Deployment", async () => {
    const contract = await loadContract(join(exampleDir, "reconcile-conformance.deployed.yaml"));
    if (contract.operator.mode !== "deployed") throw new Error("expected operator.deploy");
    const noRunner = { run: () => Promise.reject(new Error("plain YAML needs no command")) };
    const { objects, target } = await operatorManifests(contract.operator.deploy, {
      runner: noRunner,
      contractDir: contract.operator.dir,
    });
    expect(target).toMatchObject({
      name: "webapp-operator",
      namespace: "webapp-system",
      container: "manager",
    });
    const setup = deployedSetup(objects, target, "172.18.0.1");
    expect(setup.scenarioObjects.map((o) => `${o.kind}/${o.metadata?.name}`)).toEqual([
      "ServiceAccount/webapp-operator",
    ]);
    expect(JSON.stringify(target.deployment)).toContain('"image":"webapp-operator:ci"');
  });

  it("loads the bundled example operator's contract", async () => {
    const contract = await loadContract(join(exampleDir, "reconcile-conformance.yaml"));
    expect(contract.customResource).toEqual({
      group: "demo.reconcile-conformance.dev",
      version: "v1alpha1",
      resource: "webapps",
      kind: "WebApp",
    });
    expect(contract.updates).toEqual([
      { spec: { replicas: 2 } },
      { spec: { port: 9090, args: ["--greeting=bonjour"] } },
    ]);
    expect(contract.operator).toMatchObject({ mode: "process", cwd: exampleDir });
  });

  it("compiles a CEL readiness expression once and evaluates it", async () => {
    const contract = await loadContract(
      await contractDir({ ...minimal, readiness: { cel: "self.status.size == self.spec.size" } }),
    );
    expect(contract.readiness.kind).toBe("cel");
  });

  it.each([
    ["a missing command", { ...minimal, operator: {} }, "operator.command: "],
    [
      "a command that is a string",
      { ...minimal, operator: { command: "./manager" } },
      'operator.command: expected the command as a list of words, e.g. ["./bin/manager", "--leader-elect=false"], got "./manager"',
    ],
    ["a misspelt field", { ...minimal, quietPeriode: "2s" }, '(top level): unknown field "quietPeriode"'],
    [
      "a bad duration",
      { ...minimal, quietPeriod: "1.5 seconds" },
      'quietPeriod: how long the operator must make no write to count as converged: expected a duration such as "1.5s", "500ms" or "2m", got "1.5 seconds"',
    ],
    [
      "an unknown readiness",
      { ...minimal, readiness: "ready" },
      'readiness: expected "conditions", "quiet" or { cel: "<expression over self>" }, got "ready"',
    ],
    [
      "an unknown suite",
      { ...minimal, suites: ["drfit"] },
      'suites[0]: expected one of drift, status-stability, idempotency, conflict, staleness, differential, deletion, got "drfit"',
    ],
    ["an empty update", { ...minimal, updates: [{}] }, "updates[0]: expected at least one field to change"],
    ["no CRDs", { ...minimal, crds: [] }, "crds: expected at least one CRD manifest"],
  ])(
    "names the file, the field, the bad value and the expected form: %s",
    async (_name, contract, expected) => {
      const message = await loadError(contract);
      expect(message).toContain("reconcile-conformance.yaml: the contract is not valid:");
      expect(message).toContain(expected);
    },
  );

  it("reports a CEL expression that does not compile, with its position", async () => {
    const message = await loadError({ ...minimal, readiness: { cel: "self.status.ready &&" } });
    expect(message).toMatch(
      /readiness\.cel: "self\.status\.ready &&" does not compile at line 1, column \d+: /,
    );
  });

  it("reports files that are missing, not CRDs, or do not serve the sample", async () => {
    expect(await loadError({ ...minimal, crds: ["crds/missing.yaml"] })).toMatch(
      /crds\[0\]: cannot read .*crds\/missing\.yaml: no such file or directory \(ENOENT\)/,
    );
    expect(await loadError({ ...minimal, crds: ["sample.yaml"] })).toContain(
      "crds[0]: sample.yaml holds no CustomResourceDefinition (kinds: Widget)",
    );
    expect(
      await loadError(minimal, { "sample.yaml": { ...SAMPLE, apiVersion: "example.com/v2" } }),
    ).toContain(
      'sample: no CRD in crds serves Widget in example.com/v2; expected one whose spec.group is "example.com", spec.names.kind "Widget" and a served version "v2"',
    );
    expect(await loadError(minimal, { "sample.yaml": { kind: "Widget" } })).toContain(
      "sample: sample.yaml needs apiVersion, kind and metadata.name",
    );
    expect(await loadError("operator: [unclosed")).toContain("not valid YAML");
  });

  it("resolves operator.namespaced as a flag or a variable, and refuses both, neither or a bad flag", async () => {
    const withScope = (namespaced: unknown) => ({
      ...minimal,
      operator: { ...minimal.operator, namespaced },
    });
    expect(
      (await loadContract(await contractDir(withScope({ arg: "--watch-namespace" })))).operator,
    ).toMatchObject({
      namespaced: { arg: "--watch-namespace" },
    });
    expect(
      (await loadContract(await contractDir(withScope({ env: "WATCH_NAMESPACE" })))).operator,
    ).toMatchObject({
      namespaced: { env: "WATCH_NAMESPACE" },
    });
    expect((await loadContract(await contractDir(minimal))).operator.namespaced).toBeUndefined();
    expect(await loadError(withScope({ arg: "--ns", env: "NS" }))).toContain(
      "operator.namespaced: expected exactly one of arg or env",
    );
    expect(await loadError(withScope({}))).toContain(
      "operator.namespaced: expected exactly one of arg or env",
    );
    expect(await loadError(withScope({ arg: "watch namespace" }))).toContain(
      'operator.namespaced.arg: expected a flag such as "--watch-namespace"',
    );
  });

  it("parses durations once", () => {
    expect([durationMs("1.5s"), durationMs("500ms"), durationMs("2m")]).toEqual([1500, 500, 120_000]);
  });
});

describe("fixtures", () => {
  const secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "db" },
    stringData: { password: "p" },
  };
  const storageClass = {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: "fast" },
    provisioner: "x",
  };

  it("reads every object of every file, in order, with the file it came from", async () => {
    const file = await contractDir(
      { ...minimal, fixtures: ["fixtures/all.yaml"] },
      { "fixtures/all.yaml": `${stringify(secret)}---\n${stringify(storageClass)}` },
    );
    const contract = await loadContract(file);
    const at = join(file, "..", "fixtures/all.yaml");
    expect(contract.fixtures).toEqual([
      { file: at, object: secret },
      { file: at, object: storageClass },
    ]);
    expect((await loadContract(await contractDir(minimal))).fixtures).toEqual([]);
  });

  it.each([
    [
      { ...secret, metadata: { name: "db", namespace: "prod" } },
      /fixtures\[0\]: f\.yaml: Secret db names namespace prod: leave it out/,
    ],
    [
      { apiVersion: "v1", kind: "Secret", metadata: {} },
      /fixtures\[0\]: f\.yaml holds an object without apiVersion, kind or metadata\.name/,
    ],
  ])("refuses a fixture that cannot be made per scenario: %j", async (object, message) => {
    expect(await loadError({ ...minimal, fixtures: ["f.yaml"] }, { "f.yaml": object })).toMatch(message);
  });

  it("names a fixture file that cannot be read", async () => {
    expect(await loadError({ ...minimal, fixtures: ["missing.yaml"] })).toMatch(
      /fixtures\[0\]: cannot read .*missing\.yaml/,
    );
  });
});

describe("generatedUpdates", () => {
  const example = async (setting?: string) => {
    const file = join(exampleDir, "reconcile-conformance.yaml");
    if (setting === undefined) return loadContract(file);
    const dir = await mkdtemp(join(tmpdir(), "rc-generated-"));
    const text = (await readFile(file, "utf8")).replaceAll(/(crds\/|samples\/)/g, `${exampleDir}/$1`);
    await writeFile(join(dir, "c.yaml"), `${text}\ngeneratedUpdates: ${setting}\n`);
    return loadContract(join(dir, "c.yaml"));
  };

  it("is on by default, with its budget and seed; false or a budget of 0 turns it off", async () => {
    expect((await example()).exploration).toEqual({ max: 8, seed: 1 });
    expect((await example("true")).exploration).toEqual({ max: 8, seed: 1 });
    expect((await example("{ max: 3, seed: 42 }")).exploration).toEqual({ max: 3, seed: 42 });
    expect((await example("{ seed: 9 }")).exploration).toEqual({ max: 8, seed: 9 });
    expect((await example("false")).exploration).toBeUndefined();
    expect((await example("{ max: 0 }")).exploration).toBeUndefined();
    // Chosen at run time, once the API server has checked them.
    expect((await example()).generatedUpdates).toBeUndefined();
  });

  it("starts each generated update from the spec the contract's updates end on, alone", async () => {
    const loaded = await example();
    const contract = {
      ...loaded,
      generatedUpdates: [
        { patch: { spec: { replicas: 3 } }, description: "spec.replicas: 2 → 3", field: "spec.replicas" },
        { patch: { spec: { args: [] } }, description: "spec.args: element 0 removed", field: "spec.args" },
      ],
    };
    expect(specPath(contract, 2).map((s) => s.spec)).toEqual([1, 2]);
    expect(specPath(contract, 4)).toEqual([
      { patch: { spec: { replicas: 2 } }, spec: 1 },
      { patch: { spec: { port: 9090, args: ["--greeting=bonjour"] } }, spec: 2 },
      { patch: { spec: { args: [] } }, spec: 4 },
    ]);
    // Spec 4 keeps replicas 2: generated update 3 is not on its way.
    expect(sampleWithSpec(contract, 4).spec).toMatchObject({ replicas: 2, port: 9090, args: [] });
    expect(() => specPath(contract, 5)).toThrow(RangeError);
    expect([2, 4].map((k) => updateName(contract, k))).toEqual([
      "update 2",
      "generated update 4 (spec.args: element 0 removed)",
    ]);
  });

  it("is refused when it is neither a boolean nor a budget", async () => {
    expect(await loadError({ ...minimal, generatedUpdates: "yes" })).toMatch(
      /generatedUpdates: expected true, false, or \{ max, seed \}/,
    );
    expect(await loadError({ ...minimal, generatedUpdates: { max: -1 } })).toMatch(
      /generatedUpdates\.max: expected a whole number, 0 or more/,
    );
  });
});

describe("the published JSON Schema", () => {
  it("is the one the contract schema generates (run `npm run schema` after changing it)", async () => {
    expect(await readFile(SCHEMA_FILE, "utf8")).toBe(renderSchema());
  });

  it("and so is the contract reference, docs/contract.md, with a row for every field", async () => {
    const reference = await readFile(REFERENCE_FILE, "utf8");
    expect(reference).toBe(renderContractReference());
    for (const path of [
      "operator.command",
      "operator.namespaced.arg",
      "crds",
      "sample",
      "readiness",
      "drift.exclude",
    ]) {
      expect(reference).toContain(`| \`${path}\` |`);
    }
    expect(reference).toMatch(/\| `operator\.command` \| list of string \| optional \|/);
    expect(reference).toMatch(/\| `operator\.deploy\.image` \| string \| \*\*required\*\* \|/);
    expect(reference).toMatch(/\| `quietPeriod` \| string \| `"1.5s"` \|/);
  });

  it("documents the defaults and forbids unknown fields, for editors", () => {
    const schema = JSON.parse(renderSchema()) as {
      required: string[];
      additionalProperties: boolean;
      properties: Record<string, { default?: unknown }>;
    };
    expect(schema.required).toEqual(["operator", "crds", "sample"]);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.quietPeriod?.default).toBe("1.5s");
    expect(schema.properties.readiness?.default).toBe("conditions");
  });
});
