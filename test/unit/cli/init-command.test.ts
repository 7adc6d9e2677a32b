import { cp, mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parse, stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { initCommand } from "../../../src/cli/init-command.js";
import { VERSION } from "../../../src/version.js";
import { contractJsonSchema } from "../../../src/contract/contract-schema.js";
import { loadContract, type Contract, type ProcessOperator } from "../../../src/contract/load-contract.js";
import { ExitCode, UsageError } from "../../../src/errors.js";
import { pathExists } from "../../../src/util/files.js";
import { asRecord } from "../../../src/util/records.js";
import { commandContext, refusingRunner } from "../../support/command-context.js";
import { exampleCrd } from "../../support/crd-fixture.js";
import { exampleDir } from "../../support/webapp-example.js";

/** The contract's operator, which init always writes as a local command. */
function processOperator(contract: Contract): ProcessOperator {
  if (contract.operator.mode !== "process")
    throw new Error(`expected operator.command, got ${contract.operator.mode}`);
  return contract.operator;
}

const WEBAPP_CRD = "config/crd/bases/demo.reconcile-conformance.dev_webapps.yaml";
const WEBAPP_SAMPLE = "config/samples/demo_v1alpha1_webapp.yaml";

/** A CommandContext whose logger lines are kept; a command it runs is refused (init then says it could not build, and goes on). */
function testContext() {
  const lines: string[] = [];
  const { context } = commandContext({
    runner: refusingRunner("no command runs in these tests"),
    environment: { env: {}, homeDir: "/nonexistent" },
    logger: {
      info: (m) => lines.push(m),
      warn: (m) => lines.push(`warning: ${m}`),
      debug: () => {},
    },
  });
  return { context, log: () => lines.join("\n") };
}

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "rc-init-"));
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

const KUBEBUILDER_MAIN = (extraFlags: string) => `package main

import (

	"flag"

	ctrl "sigs.k8s.io/controller-runtime"
)

func main() {
	var metricsAddr, probeAddr, leaderNamespace string
	var enableLeaderElection bool
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "The address the metrics endpoint binds to.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	flag.BoolVar(&enableLeaderElection, "leader-elect", false, "Enable leader election for controller manager.")
	flag.StringVar(&leaderNamespace, "leader-election-namespace", "", "Namespace of the Lease.")
${extraFlags}
	flag.Parse()
	_ = ctrl.GetConfigOrDie()
}
`;

/** The example operator's real CRD and sample in a kubebuilder layout, a sample of another kind sorted first, and a kustomization. */
async function kubebuilderProject(main: string): Promise<string> {
  return project({
    [WEBAPP_CRD]: await readFile(join(exampleDir, "crds/webapp.yaml"), "utf8"),
    [WEBAPP_SAMPLE]: await readFile(join(exampleDir, "samples/webapp.yaml"), "utf8"),
    "config/samples/a_gadget.yaml": stringify({
      apiVersion: "other.example.com/v1",
      kind: "Gadget",
      metadata: { name: "g" },
      spec: { size: 1 },
    }),
    "config/samples/kustomization.yaml": stringify({
      apiVersion: "kustomize.config.k8s.io/v1beta1",
      kind: "Kustomization",
      metadata: { name: "samples" },
      resources: ["demo_v1alpha1_webapp.yaml"],
    }),
    "cmd/main.go": main,
  });
}

const WIDGET_CRDS = [
  exampleCrd(
    { plural: "widgets", singular: "widget", kind: "Widget" },
    {
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: {
            mode: { type: "string", pattern: "^[a-z]+$" },
            size: { type: "integer", minimum: 1, maximum: 3 },
          },
        },
        status: { type: "object", properties: { count: { type: "integer" } } },
      },
    },
  ),
  exampleCrd({ plural: "gizmos", singular: "gizmo", kind: "Gizmo" }, { type: "object" }),
];
const WIDGET = {
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { name: "w" },
  spec: { mode: "fast", size: 3 },
};

/** Not kubebuilder: two CRDs in one multi-document file, the sample elsewhere, no main.go. */
async function plainProject(sample: unknown = WIDGET): Promise<string> {
  return project({
    "manifests/crds.yaml": WIDGET_CRDS.map((crd) => stringify(crd)).join("---\n"),
    "manifests/README.md": "not YAML\n",
    "examples/widget.yaml": stringify(sample),
  });
}

async function initError(args: string[]): Promise<UsageError> {
  const error = await initCommand(args, testContext().context).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(UsageError);
  expect((error as UsageError).exitCode).toBe(ExitCode.usage);
  return error as UsageError;
}

/** The comments of a file as one line of prose (they are wrapped at 100 columns). */
function prose(text: string): string {
  return text
    .split("\n")
    .filter((l) => /^ *# /.test(l))
    .map((l) => l.replace(/^ *# /, ""))
    .join(" ");
}

/**
 * A part of the file shown commented out, from its first line (`  # key:`)
 * through the lines indented under it, uncommented.
 */
function commentedOut(text: string, first: string): string {
  const lines = text.split("\n");
  const start = lines.indexOf(first);
  expect(start, first).toBeGreaterThan(0);
  const prefix = first.slice(0, first.indexOf("#") + 2);
  const part = [lines[start] ?? ""];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith(`${prefix}  `)) break;
    part.push(line);
  }
  return part.map((line) => line.slice(prefix.length)).join("\n");
}

/** The comment lines right above line `at` (same indentation), as one line of prose. */
function commentAbove(lines: readonly string[], at: number): string {
  const indent = /^ */.exec(lines[at] ?? "")?.[0] ?? "";
  const above: string[] = [];
  for (let i = at - 1; i >= 0 && (lines[i] ?? "").startsWith(`${indent}# `); i--) {
    above.unshift((lines[i] ?? "").slice(indent.length + 2));
  }
  return above.join(" ");
}

/** The `properties` of a JSON Schema object node ({} when it has none). */
function propertiesOf(schema: unknown): Record<string, unknown> {
  return asRecord(asRecord(schema).properties);
}

function descriptionOf(schema: unknown): string | undefined {
  const description = asRecord(schema).description;
  return typeof description === "string" ? description : undefined;
}

/**
 * The fields written in `text` (at any depth) that the contract's JSON Schema
 * describes, in order, after asserting that the comment right above each
 * holds the schema's description of it.
 */
function describedFields(text: string): string[] {
  const lines = text.split("\n");
  const described: string[] = [];
  const parents: { indent: number; schema: unknown }[] = [];
  lines.forEach((line, at) => {
    const field = /^( *)([A-Za-z$]+):/.exec(line);
    if (!field) return;
    const indent = field[1]?.length ?? 0;
    const name = field[2] ?? "";
    while ((parents.at(-1)?.indent ?? -1) >= indent) parents.pop();
    const schema = propertiesOf(parents.length === 0 ? contractJsonSchema() : parents.at(-1)?.schema)[name];
    parents.push({ indent, schema });
    const description = descriptionOf(schema);
    if (description === undefined) return;
    expect(commentAbove(lines, at), name).toContain(description);
    described.push(name);
  });
  return described;
}

/** The line of a field, written or commented out: `  key:` or `  # key:`. */
function fieldLine(lines: string[], key: string, indent: string): number {
  return lines.findIndex((l) => l.startsWith(`${indent}${key}:`) || l.startsWith(`${indent}# ${key}:`));
}

describe("init", () => {
  it("writes a contract for a kubebuilder project that loads and points at its CRD, sample and main.go", async () => {
    const dir = await kubebuilderProject(
      KUBEBUILDER_MAIN(
        '\tvar watchNamespace string\n\tflag.StringVar(&watchNamespace, "watch-namespace", "", "Namespace to watch.")',
      ),
    );
    const { context, log } = testContext();
    expect(await initCommand(["--dir", dir], context)).toBe(ExitCode.ok);

    const file = join(dir, "reconcile-conformance.yaml");
    const contract = await loadContract(file);
    expect(contract.crds.map((c) => c.file)).toEqual([join(dir, WEBAPP_CRD)]);
    expect(contract.sample.file).toBe(join(dir, WEBAPP_SAMPLE));
    expect(contract.customResource).toEqual({
      group: "demo.reconcile-conformance.dev",
      version: "v1alpha1",
      resource: "webapps",
      kind: "WebApp",
    });
    expect(processOperator(contract).argv).toEqual([
      "go",
      "run",
      "./cmd/main.go",
      "--leader-elect=false",
      "--metrics-bind-address=0",
      "--health-probe-bind-address=0",
    ]);
    expect(processOperator(contract).cwd).toBe(dir);
    expect(contract.operator.namespaced).toEqual({ arg: "--watch-namespace" });
    // The sample has replicas: 1 and port: 8080, both integers in the CRD: two updates, of different fields.
    expect(contract.updates).toEqual([{ spec: { replicas: 2 } }, { spec: { port: 8081 } }]);
    expect(contract.readiness).toEqual({ kind: "conditions" });

    const text = await readFile(file, "utf8");
    const lines = text.split("\n");
    expect(lines[0]).toMatch(/^# yaml-language-server: \$schema=\S+reconcile-conformance\.schema\.json$/);
    // Paths relative to the written file.
    expect(text).toContain(`  - "${WEBAPP_CRD}"\n`);
    expect(text).toContain(`sample: "${WEBAPP_SAMPLE}"\n`);
    expect(text).not.toContain(dir);
    // The other sample is named, the kustomization is not.
    expect(prose(text)).toMatch(/Other samples .*: config\/samples\/a_gadget\.yaml \(Gadget\)\./);
    expect(text).not.toContain("config/samples/kustomization.yaml");

    // Each field a user sets has a comment right above it (top level and operator.*).
    for (const key of ["operator", "crds", "sample", "updates", "readiness", "quietPeriod", "timeouts"]) {
      const at = fieldLine(lines, key, "");
      expect(at, key).toBeGreaterThan(0);
      if (key !== "operator") expect(lines[at - 1], key).toMatch(/^# /);
    }
    for (const key of ["ignoreWrites", "drift", "suites"]) {
      expect(lines[fieldLine(lines, key, "") - 1], key).toMatch(/^# /);
    }
    for (const key of ["command", "workingDir", "env", "passThroughEnv", "startTimeout", "namespaced"]) {
      const at = fieldLine(lines, key, "  ");
      expect(at, key).toBeGreaterThan(0);
      expect(lines[at - 1], key).toMatch(/^ {2}# /);
    }

    const progress = log();
    expect(progress).toContain(`init: wrote ${file}`);
    expect(progress).toContain("--watch-namespace");
    expect(progress).toContain(`next: review the file, then run: reconcile-conformance run --config ${file}`);
  });

  it("mentions every field of the contract schema", async () => {
    const dir = await kubebuilderProject(KUBEBUILDER_MAIN(""));
    await initCommand(["--dir", dir], testContext().context);
    const text = await readFile(join(dir, "reconcile-conformance.yaml"), "utf8");
    const keys: string[] = [];
    const walk = (schema: unknown, path: string) => {
      if (typeof schema !== "object" || schema === null) return;
      const record = schema as Record<string, unknown>;
      const properties = record.properties;
      if (typeof properties === "object" && properties !== null && path.split(".").length < 3) {
        for (const [key, value] of Object.entries(properties)) {
          if (key !== "$schema") keys.push(path ? `${path}.${key}` : key);
          walk(value, path ? `${path}.${key}` : key);
        }
      }
      for (const branch of [record.anyOf, record.oneOf, record.allOf]) {
        if (Array.isArray(branch)) for (const b of branch) walk(b, path);
      }
    };
    walk(contractJsonSchema(), "");
    expect(keys).toEqual(expect.arrayContaining(["operator.namespaced.arg", "timeouts.converge", "suites"]));
    for (const key of keys) {
      const name = key.split(".").at(-1) ?? "";
      expect(text, key).toMatch(new RegExp(`(^ *(# *)?|\\{ )${name}:`, "m"));
    }
  });

  it("comments each field it writes with the contract schema's description of it", async () => {
    const fields = [
      ...[
        "operator",
        "command",
        "env",
        "passThroughEnv",
        "startTimeout",
        "metrics",
        "args",
        "crds",
        "sample",
        "fixtures",
        "images",
        "updates",
        "generatedUpdates",
      ],
      ...["readiness", "quietPeriod", "timeouts", "converge", "crdEstablished", "ignoreWrites", "drift"],
      ...["include", "exclude", "promises", "waivers"],
    ];
    const plain = await kubebuilderProject(KUBEBUILDER_MAIN(""));
    await initCommand(["--dir", plain], testContext().context);
    expect(describedFields(await readFile(join(plain, "reconcile-conformance.yaml"), "utf8"))).toEqual(
      fields,
    );

    const namespaced = await kubebuilderProject(
      KUBEBUILDER_MAIN('\tflag.StringVar(&ns, "watch-namespace", "", "Namespace to watch.")'),
    );
    await initCommand(["--dir", namespaced], testContext().context);
    expect(describedFields(await readFile(join(namespaced, "reconcile-conformance.yaml"), "utf8"))).toEqual(
      expect.arrayContaining(["namespaced", "arg"]),
    );
  });

  it("tells each operator a metrics port of its own through kubebuilder's flags, over plain HTTP", async () => {
    const secure = await kubebuilderProject(
      KUBEBUILDER_MAIN('\tflag.BoolVar(&secureMetrics, "metrics-secure", true, "Serve metrics over HTTPS.")'),
    );
    await initCommand(["--dir", secure], testContext().context);
    const contract = await loadContract(join(secure, "reconcile-conformance.yaml"));
    expect(contract.operator.mode === "process" && contract.operator.metrics).toEqual({
      args: ["--metrics-bind-address=127.0.0.1:{port}", "--metrics-secure=false"],
      env: {},
      path: "/metrics",
      settleMs: 300,
    });

    // No address flag: left commented out, and the quiet period alone decides.
    const none = await kubebuilderProject(KUBEBUILDER_MAIN("").replace(/.*"metrics-bind-address".*\n/, ""));
    await initCommand(["--dir", none], testContext().context);
    const file = join(none, "reconcile-conformance.yaml");
    const without = await loadContract(file);
    expect(without.operator.mode === "process" && without.operator.metrics).toBeUndefined();
    expect(await readFile(file, "utf8")).toMatch(/no metrics address flag found in the main package/);
  });

  it("leaves operator.namespaced commented out when main.go has no namespace flag", async () => {
    const dir = await kubebuilderProject(KUBEBUILDER_MAIN(""));
    const { context, log } = testContext();
    expect(await initCommand(["--dir", dir], context)).toBe(ExitCode.ok);
    const file = join(dir, "reconcile-conformance.yaml");
    const contract = await loadContract(file);
    expect(contract.operator.namespaced).toBeUndefined();
    const text = await readFile(file, "utf8");
    // Shown commented out, both ways: uncommented, it is YAML of both (the user keeps one).
    expect(parse(commentedOut(text, "  # namespaced:"))).toEqual({
      namespaced: { arg: "--watch-namespace", env: "WATCH_NAMESPACE" },
    });
    // The leader election's namespace flag is not a watch namespace.
    expect(text).not.toContain("--leader-election-namespace");
    expect(prose(text)).toContain("Not set: cmd/main.go defines no namespace flag");
    expect(log()).toContain("scenarios will run one at a time");
  });

  it("sets operator.namespaced.env when main.go reads WATCH_NAMESPACE", async () => {
    const dir = await kubebuilderProject(KUBEBUILDER_MAIN('\t_ = os.Getenv("WATCH_NAMESPACE")'));
    await initCommand(["--dir", dir], testContext().context);
    const contract = await loadContract(join(dir, "reconcile-conformance.yaml"));
    expect(contract.operator.namespaced).toEqual({ env: "WATCH_NAMESPACE" });
  });

  it("refuses to overwrite the output: exit code 2, the file unchanged", async () => {
    const dir = await kubebuilderProject(KUBEBUILDER_MAIN(""));
    const file = join(dir, "reconcile-conformance.yaml");
    await initCommand(["--dir", dir], testContext().context);
    await writeFile(file, "# edited by hand\n", { flag: "a" });
    const before = await readFile(file, "utf8");

    const error = await initError(["--dir", dir]);
    expect(error.code).toBe("init/output-exists");
    expect(error.message).toContain(file);
    expect(error.message).toContain("--output");
    expect(await readFile(file, "utf8")).toBe(before);
  });

  it("takes explicit flags for a project in no known layout", async () => {
    const dir = await plainProject();
    const output = join(dir, "ci", "contract.yaml");
    const { context, log } = testContext();
    const code = await initCommand(
      [
        "--dir",
        dir,
        "--crds",
        join(dir, "manifests"),
        "--sample",
        join(dir, "examples/widget.yaml"),
        "--command",
        './bin/op --greeting \'hello there\' --x="a\\"b"',
        "--output",
        output,
      ],
      context,
    );
    expect(code).toBe(ExitCode.ok);
    const contract = await loadContract(output);
    expect(processOperator(contract).argv).toEqual(["./bin/op", "--greeting", "hello there", '--x=a"b']);
    // The contract is elsewhere: the command still runs in the project.
    expect(processOperator(contract).cwd).toBe(dir);
    expect(contract.crds.map((c) => [c.file, c.object.metadata?.name])).toEqual([
      [join(dir, "manifests/crds.yaml"), "widgets.example.com"],
      [join(dir, "manifests/crds.yaml"), "gizmos.example.com"],
    ]);
    expect(contract.sample.file).toBe(join(dir, "examples/widget.yaml"));
    // size is at its maximum (3), so it goes down, and down again for the second update (two are
    // what the checks of two updates need); mode has a pattern and is left alone.
    expect(contract.updates).toEqual([{ spec: { size: 2 } }, { spec: { size: 1 } }]);
    // The status has no conditions.
    expect(contract.readiness).toEqual({ kind: "quiet" });
    expect(contract.operator.namespaced).toBeUndefined();

    const text = await readFile(output, "utf8");
    expect(text).toContain('  workingDir: ".."\n');
    expect(text).toContain('  - "../manifests/crds.yaml"\n');
    expect(text).toContain('sample: "../examples/widget.yaml"\n');
    expect(prose(text)).toContain("Not set: no main.go found");
    expect(log()).toContain(`init: wrote ${output}`);
  });

  it("writes updates: [] when no simple spec field can be changed", async () => {
    const dir = await plainProject({ ...WIDGET, spec: { mode: "fast" } });
    await initCommand(
      ["--dir", dir, "--crds", join(dir, "manifests"), "--sample", join(dir, "examples/widget.yaml")],
      testContext().context,
    );
    const file = join(dir, "reconcile-conformance.yaml");
    expect((await loadContract(file)).updates).toEqual([]);
    const text = await readFile(file, "utf8");
    expect(text).toMatch(/\n# [^\n]*\nupdates: \[\]\n/);
    expect(prose(text)).toContain("None could be derived from the CRD's schema");
  });

  it("writes a loadable placeholder command when there is no main.go and no --command", async () => {
    const dir = await plainProject();
    const { context, log } = testContext();
    await initCommand(
      ["--dir", dir, "--crds", join(dir, "manifests"), "--sample", join(dir, "examples/widget.yaml")],
      context,
    );
    const contract = await loadContract(join(dir, "reconcile-conformance.yaml"));
    expect(processOperator(contract).argv).toEqual(["./bin/manager", "--leader-elect=false"]);
    expect(log()).toMatch(/warning: .*no main\.go found.*give --command/);
  });

  it("detects the example operator's own layout (crds/, samples/, a main package of several files)", async () => {
    const out = await mkdtemp(join(tmpdir(), "rc-init-out-"));
    const output = join(out, "contract.yaml");
    await initCommand(["--dir", exampleDir, "--output", output], testContext().context);
    const contract = await loadContract(output);
    expect(contract.crds.map((c) => c.file)).toEqual([join(exampleDir, "crds/webapp.yaml")]);
    expect(contract.sample.file).toBe(join(exampleDir, "samples/webapp.yaml"));
    expect(processOperator(contract).argv.slice(0, 3)).toEqual(["go", "run", "."]);
    expect(processOperator(contract).cwd).toBe(exampleDir);
    expect(contract.operator.namespaced).toEqual({ arg: "--watch-namespace" });
  });

  it("points the schema line at the package in the nearest node_modules, or at --schema", async () => {
    const dir = await kubebuilderProject(KUBEBUILDER_MAIN(""));
    await mkdir(join(dir, "node_modules/reconcile-conformance/schema"), { recursive: true });
    await initCommand(["--dir", dir, "--output", join(dir, "test/contract.yaml")], testContext().context);
    const text = await readFile(join(dir, "test/contract.yaml"), "utf8");
    expect(text.split("\n")[0]).toBe(
      "# yaml-language-server: $schema=../node_modules/reconcile-conformance/schema/reconcile-conformance.schema.json",
    );
    await initCommand(
      ["--dir", dir, "--output", join(dir, "other.yaml"), "--schema", "https://example.com/s.json"],
      testContext().context,
    );
    expect((await readFile(join(dir, "other.yaml"), "utf8")).split("\n")[0]).toBe(
      "# yaml-language-server: $schema=https://example.com/s.json",
    );
  });

  it("points the schema line of an npx user (no node_modules above) at this version's published schema", async () => {
    const dir = await kubebuilderProject(KUBEBUILDER_MAIN(""));
    await initCommand(["--dir", dir], testContext().context);
    const first = (await readFile(join(dir, "reconcile-conformance.yaml"), "utf8")).split("\n")[0];
    expect(first).toBe(
      `# yaml-language-server: $schema=https://unpkg.com/reconcile-conformance@${VERSION}/schema/reconcile-conformance.schema.json`,
    );
  });

  it("writes the variables main.go and the controller package read into operator.env, webhooks off", async () => {
    const dir = await kubebuilderProject(
      KUBEBUILDER_MAIN(`\tif os.Getenv("ENABLE_WEBHOOKS") != "false" {\n\t}\n\t_ = os.Getenv("KUBECONFIG")`),
    );
    await mkdir(join(dir, "internal/controller"), { recursive: true });
    await writeFile(
      join(dir, "internal/controller/webapp_controller.go"),
      'package controller\n\nimport "os"\n\nfunc image() string {\n\tif v, ok := os.LookupEnv("WEBAPP_IMAGE"); ok {\n\t\treturn v\n\t}\n\treturn os.Getenv( "WEBAPP_IMAGE" )\n}\n',
    );
    await writeFile(
      join(dir, "internal/controller/webapp_controller_test.go"),
      'package controller\n\nvar _ = os.Getenv("TEST_ONLY")\n',
    );
    await initCommand(["--dir", dir], testContext().context);
    const text = await readFile(join(dir, "reconcile-conformance.yaml"), "utf8");
    const written = parse(text) as { operator: { env: Record<string, string> } };
    // KUBECONFIG is the kit's to set; a _test.go file is not the operator.
    expect(written.operator.env).toEqual({ ENABLE_WEBHOOKS: "false" });
    expect(text).toContain("# WEBAPP_IMAGE: read in internal/controller/webapp_controller.go (os.LookupEnv)");
    expect(text).toMatch(/^ *#\s+WEBAPP_IMAGE: "<value>"$/m);
    expect(text).not.toMatch(/TEST_ONLY|KUBECONFIG: read/);
    // And loadContract takes it as written.
    expect(processOperator(await loadContract(join(dir, "reconcile-conformance.yaml"))).env).toMatchObject({
      ENABLE_WEBHOOKS: "false",
    });
  });

  it("finds a variable read through a constant of another file of the package, or of another package", async () => {
    const dir = await kubebuilderProject(KUBEBUILDER_MAIN("\t_ = os.Getenv(config.MetricsEnv)"));
    await mkdir(join(dir, "internal/controller"), { recursive: true });
    await writeFile(
      join(dir, "internal/controller/webapp_controller.go"),
      'package controller\n\nimport "os"\n\nfunc image() string {\n\treturn os.Getenv(imageEnvVar)\n}\n',
    );
    await writeFile(
      join(dir, "internal/controller/constants.go"),
      'package controller\n\nconst (\n\timageEnvVar = "OPERAND_IMAGE"\n\tMetricsEnv string = "METRICS_MODE"\n)\n',
    );
    await initCommand(["--dir", dir], testContext().context);
    const text = await readFile(join(dir, "reconcile-conformance.yaml"), "utf8");
    expect(text).toContain(
      "# OPERAND_IMAGE: read in internal/controller/webapp_controller.go (os.Getenv(imageEnvVar))",
    );
    expect(text).toContain("# METRICS_MODE: read in cmd/main.go (os.Getenv(config.MetricsEnv))");
  });

  it("finds kubebuilder's webhook configurations, keeps the webhooks on, and takes the certificate flag of main.go", async () => {
    const dir = await kubebuilderProject(
      KUBEBUILDER_MAIN(
        `\tflag.StringVar(&webhookCertPath, "webhook-cert-path", "", "The directory that contains the webhook certificate.")\n\tif os.Getenv("ENABLE_WEBHOOKS") != "false" {\n\t}`,
      ),
    );
    await mkdir(join(dir, "config/webhook"), { recursive: true });
    await cp(join(exampleDir, "webhooks/manifests.yaml"), join(dir, "config/webhook/manifests.yaml"));
    // kubebuilder's other files there: a Service, a kustomization; neither is a webhook configuration.
    await writeFile(
      join(dir, "config/webhook/service.yaml"),
      stringify({ apiVersion: "v1", kind: "Service", metadata: { name: "webhook-service" } }),
    );
    await writeFile(
      join(dir, "config/webhook/kustomization.yaml"),
      "resources: [manifests.yaml, service.yaml]\n",
    );
    await initCommand(["--dir", dir], testContext().context);
    const contract = await loadContract(join(dir, "reconcile-conformance.yaml"));
    const operator = processOperator(contract);
    expect(operator.env).toMatchObject({ ENABLE_WEBHOOKS: "true" });
    expect(operator.webhooks?.configurations.map((c) => [c.file, c.object.kind])).toEqual([
      [join(dir, "config/webhook/manifests.yaml"), "MutatingWebhookConfiguration"],
      [join(dir, "config/webhook/manifests.yaml"), "ValidatingWebhookConfiguration"],
    ]);
    expect(operator.webhooks?.certDir).toEqual({ arg: "--webhook-cert-path" });
    expect(operator.webhooks?.portTelling).toBeUndefined();
  });

  it("names where it looked and the flag to give when there are no CRDs", async () => {
    const dir = await project({
      "cmd/main.go": KUBEBUILDER_MAIN(""),
      "config/crd/bases/README.md": "empty\n",
    });
    const error = await initError(["--dir", dir]);
    expect(error.code).toBe("init/no-crds");
    expect(error.message).toContain(dir);
    expect(error.message).toContain("config/crd/bases");
    expect(error.message).toContain("--crds DIR");
    expect(await pathExists(join(dir, "reconcile-conformance.yaml"))).toBe(false);

    const empty = join(dir, "config/crd/bases");
    const explicit = await initError(["--dir", dir, "--crds", empty]);
    expect(explicit.message).toContain(`--crds ${empty}`);
    expect(explicit.message).toContain("no CustomResourceDefinition");
  });

  it("refuses a sample whose kind no CRD serves", async () => {
    const dir = await kubebuilderProject(KUBEBUILDER_MAIN(""));
    const gadget = join(dir, "config/samples/a_gadget.yaml");
    const error = await initError(["--dir", dir, "--sample", gadget]);
    expect(error.code).toBe("init/sample-not-served");
    expect(error.message).toContain(gadget);
    expect(error.message).toContain("Gadget in other.example.com/v1");
    expect(error.message).toContain("WebApp (demo.reconcile-conformance.dev/v1alpha1)");
    expect(await pathExists(join(dir, "reconcile-conformance.yaml"))).toBe(false);
  });

  it("says so when no sample in the layout is of a served kind", async () => {
    const dir = await kubebuilderProject(KUBEBUILDER_MAIN(""));
    await writeFile(join(dir, WEBAPP_SAMPLE), stringify({ ...WIDGET }));
    const error = await initError(["--dir", dir]);
    expect(error.code).toBe("init/no-sample");
    expect(error.message).toContain("a_gadget.yaml: Gadget other.example.com/v1");
    expect(error.message).toContain("--sample FILE");
  });

  it("names the file and line of YAML it cannot parse", async () => {
    const dir = await kubebuilderProject(KUBEBUILDER_MAIN(""));
    const broken = join(dir, "config/crd/bases/broken.yaml");
    await writeFile(broken, "apiVersion: v1\nkind: [\n  a: b: c\n");
    const error = await initError(["--dir", dir]);
    expect(error.code).toBe("init/invalid-yaml");
    expect(error.message).toMatch(new RegExp(`${broken.replace(/[.]/g, "\\.")}:3:\\d+: not valid YAML`));
  });

  it("refuses a --command it cannot split and an unexpected argument", async () => {
    const dir = await kubebuilderProject(KUBEBUILDER_MAIN(""));
    expect((await initError(["--dir", dir, "--command", "./bin/op 'unclosed"])).message).toContain(
      "unclosed '",
    );
    expect((await initError(["--dir", dir, "extra"])).message).toContain('unexpected argument "extra"');
    expect(await pathExists(join(dir, "reconcile-conformance.yaml"))).toBe(false);
  });
});
