import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import type { OperatorLayout } from "../../../src/cli/operator-layout.js";
import { clockField, goRunStartTimeout, starterContract } from "../../../src/cli/starter-contract.js";
import {
  contractJsonSchema,
  contractSchema,
  SELECTABLE_SUITES,
} from "../../../src/contract/contract-schema.js";
import { asRecord, isRecord } from "../../../src/util/records.js";

const CRD = "/repo/config/crd/bases/example.com_widgets.yaml";
const SAMPLE = "/repo/config/samples/v1_widget.yaml";

/** A layout as operatorLayout finds it for a kubebuilder project in /repo. */
const LAYOUT: OperatorLayout = {
  crds: { files: [CRD], kinds: [], skipped: [], origin: "found in config/crd/bases" },
  sample: { file: SAMPLE, apiVersion: "example.com/v1", kind: "Widget", name: "w", spec: { size: 1 } },
  others: [],
  main: { file: "/repo/cmd/main.go", name: "cmd/main.go", text: "", target: "./cmd/main.go" },
  command: {
    words: ["go", "run", "./cmd/main.go", "--leader-elect=false"],
    origin: "go run of ./cmd/main.go",
    goRun: true,
    notes: "Found cmd/main.go.",
  },
  namespaced: { arg: "--watch-namespace", why: "cmd/main.go defines the flag --watch-namespace" },
  updates: [{ field: "size", from: 1, to: 2 }],
  leftAlone: [],
  schedule: undefined,
  readiness: "conditions",
  environment: [],
  webhooks: undefined,
  metrics: undefined,
};

const write = (layout: Partial<OperatorLayout> = {}, outputDir = "/repo") =>
  starterContract({ layout: { ...LAYOUT, ...layout }, dir: "/repo", outputDir, schemaRef: "s.json" });

/** The minimal contract the examples are checked in. */
const MINIMAL = { operator: { command: ["x"] }, crds: ["c.yaml"], sample: "s.yaml" };

/**
 * A commented-out part, uncommented and parsed: from the line that starts
 * with `first` through the lines indented under it (and, for a list element,
 * the elements after it).
 */
function uncommented(text: string, first: string): unknown {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l.startsWith(first));
  expect(start, first).toBeGreaterThan(0);
  const prefix = first.slice(0, first.indexOf("# ") + 2);
  const content = (line: string) => line.slice(prefix.length);
  const depth = (line: string) => content(line).length - content(line).trimStart().length;
  const head = lines[start] ?? "";
  const element = content(head).trimStart().startsWith("- ");
  const part = [content(head)];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith(prefix)) break;
    const deeper = depth(line) > depth(head);
    const next = element && depth(line) === depth(head) && content(line).trimStart().startsWith("- ");
    if (!deeper && !next) break;
    part.push(content(line));
  }
  return parse(part.join("\n"));
}

/** Every comment as prose, a commented-out comment ("#   # ...") as its text. */
function prose(text: string): string {
  return text
    .split("\n")
    .filter((l) => /^ *#/.test(l))
    .map((l) => l.replace(/^ *# ?/, "").replace(/^ *# /, ""))
    .join(" ");
}

/** Every description in the contract's JSON Schema. */
function descriptions(node: unknown = contractJsonSchema()): string[] {
  if (Array.isArray(node)) return node.flatMap((item) => descriptions(item));
  if (!isRecord(node)) return [];
  const own = node.description;
  return [
    ...(typeof own === "string" ? [own] : []),
    ...Object.entries(node).flatMap(([key, value]) => (key === "description" ? [] : descriptions(value))),
  ];
}

describe("starterContract", () => {
  it.each<[string, Partial<OperatorLayout>, string, Record<string, unknown>]>([
    [
      "a kubebuilder project",
      {},
      "/repo",
      {
        operator: {
          command: ["go", "run", "./cmd/main.go", "--leader-elect=false"],
          env: {},
          passThroughEnv: [],
          startTimeout: "180s",
          namespaced: { arg: "--watch-namespace" },
        },
        crds: ["config/crd/bases/example.com_widgets.yaml"],
        sample: "config/samples/v1_widget.yaml",
        updates: [{ spec: { size: 2 } }],
        readiness: "conditions",
      },
    ],
    [
      "elsewhere: paths relative to the contract, the working directory set; WATCH_NAMESPACE; no update; quiet",
      {
        command: { words: ["./bin/op"], origin: "given with --command", goRun: false, notes: "Given." },
        namespaced: { env: "WATCH_NAMESPACE", why: "cmd/main.go reads WATCH_NAMESPACE" },
        updates: [],
        readiness: "quiet",
      },
      "/repo/ci",
      {
        operator: {
          command: ["./bin/op"],
          workingDir: "..",
          env: {},
          passThroughEnv: [],
          startTimeout: "60s",
          namespaced: { env: "WATCH_NAMESPACE" },
        },
        crds: ["../config/crd/bases/example.com_widgets.yaml"],
        sample: "../config/samples/v1_widget.yaml",
        updates: [],
        readiness: "quiet",
      },
    ],
    [
      "no namespace: operator.namespaced left out",
      { namespaced: { none: "cmd/main.go defines no namespace flag" } },
      "/repo",
      {
        operator: {
          command: ["go", "run", "./cmd/main.go", "--leader-elect=false"],
          env: {},
          passThroughEnv: [],
          startTimeout: "180s",
        },
      },
    ],
  ])("writes %s: a valid contract of what was found", (_name, layout, outputDir, expected) => {
    const document: unknown = parse(write(layout, outputDir));
    expect(document).toMatchObject(expected);
    expect(contractSchema.safeParse(document).error).toBeUndefined();
    // The rest is the schema's defaults, written out.
    const defaults = contractSchema.parse(MINIMAL);
    expect(document).toMatchObject({
      quietPeriod: defaults.quietPeriod,
      timeouts: defaults.timeouts,
      ignoreWrites: defaults.ignoreWrites,
      drift: defaults.drift,
      promises: [],
      waivers: [],
    });
  });

  it("gives each of the schema's descriptions at most once, and the ones of the fields it shows", () => {
    const text = prose(write({ namespaced: { none: "no flag" } }));
    for (const description of descriptions()) {
      expect(text.split(description).length - 1, description).toBeLessThanOrEqual(1);
    }
    const shown = descriptions().filter((d) => text.includes(d));
    // Not shown: $schema (the first line names the schema) and the deploy.deployment's undescribed fields.
    expect(descriptions().filter((d) => !shown.includes(d))).toEqual([
      "The JSON Schema this file follows (for editors).",
    ]);
  });

  it("shows the fields it leaves unset, and examples, as YAML that the schema accepts", () => {
    const text = write({ namespaced: { none: "no flag" } });
    const deploy = uncommented(text, "  # deploy:");
    expect(
      contractSchema.safeParse({ ...MINIMAL, operator: asRecord(deploy) }).error,
      JSON.stringify(deploy),
    ).toBeUndefined();
    expect(uncommented(text, "  # workingDir:")).toEqual({ workingDir: "." });
    expect(uncommented(text, "  # namespaced:")).toEqual({
      namespaced: { arg: "--watch-namespace", env: "WATCH_NAMESPACE" },
    });
    expect(uncommented(text, "# suites:")).toEqual({ suites: [...SELECTABLE_SUITES] });
    // The webhooks' example, with one way of telling each thing kept, is a contract the schema accepts.
    const {
      portEnv: _portEnv,
      certDir: _certDir,
      certDirEnv: _certDirEnv,
      ...webhooks
    } = asRecord(asRecord(uncommented(text, "  # webhooks:")).webhooks);
    expect(
      contractSchema.safeParse({ ...MINIMAL, operator: { command: ["x"], webhooks } }).error,
      JSON.stringify(webhooks),
    ).toBeUndefined();
    const readiness = uncommented(text, "#   readiness:");
    const promises = uncommented(text, "#   - kind: Widget");
    const waivers = uncommented(text, "#   - check:");
    expect(promises).toHaveLength(2);
    expect(waivers).toHaveLength(2);
    const withExamples = { ...MINIMAL, ...asRecord(readiness), promises, waivers };
    expect(contractSchema.safeParse(withExamples).error, JSON.stringify(withExamples)).toBeUndefined();
  });

  it("wraps comments at 100 columns and starts with the schema line", () => {
    const text = write({
      crds: { ...LAYOUT.crds, skipped: [{ file: "/repo/config/crd/bases/copy.yaml", sameAs: CRD }] },
      others: [{ ...LAYOUT.sample, file: "/repo/config/samples/other.yaml", kind: "Gizmo" }],
    });
    const lines = text.split("\n");
    expect(lines[0]).toBe("# yaml-language-server: $schema=s.json");
    for (const line of lines.filter((l) => /^ *#/.test(l)))
      expect(line.length, line).toBeLessThanOrEqual(100);
    expect(prose(text)).toContain(
      "Left out, as they define the same CRDs as a file listed (use one or the other): config/crd/bases/copy.yaml.",
    );
    expect(prose(text)).toContain(
      "Other samples beside it (this one is the first whose kind the CRDs serve): config/samples/other.yaml (Gizmo).",
    );
  });
});

describe("starterContract: the variables the operator reads", () => {
  it("sets the webhook switch off when no webhook configurations were found, and shows the others commented out with a placeholder and where each is read", () => {
    const text = write({
      environment: [
        { name: "ENABLE_WEBHOOKS", file: "cmd/main.go", how: "os.Getenv" },
        { name: "DATABASE_URL", file: "internal/controller/db.go", how: "os.LookupEnv" },
      ],
    });
    const contract = parse(text) as { operator: { env: Record<string, string> } };
    expect(contract.operator.env).toEqual({ ENABLE_WEBHOOKS: "false" });
    expect(text).toContain("# DATABASE_URL: read in internal/controller/db.go (os.LookupEnv); no default");
    expect(text).toMatch(/^ *#\s+DATABASE_URL: "<value>"$/m);
    expect(prose(text)).toContain(
      'ENABLE_WEBHOOKS: read in cmd/main.go (os.Getenv); "false" switches kubebuilder\'s webhooks off, as init found no webhook configurations',
    );
    // And operator.webhooks is there to uncomment.
    expect(text).toMatch(/^ *# webhooks:$/m);
  });

  it("keeps the webhooks on and names their manifests and flags when it found them", () => {
    const text = write({
      environment: [{ name: "ENABLE_WEBHOOKS", file: "cmd/main.go", how: "os.Getenv" }],
      webhooks: {
        files: ["/repo/config/webhook/manifests.yaml"],
        webhooks: ["mwidget.kb.io (mutating)", "vwidget.kb.io (validating)"],
        certDirArg: { arg: "--webhook-cert-path", why: "cmd/main.go defines the flag --webhook-cert-path" },
      },
    });
    const contract = parse(text) as { operator: { env: unknown; webhooks: unknown } };
    expect(contract.operator.env).toEqual({ ENABLE_WEBHOOKS: "true" });
    expect(contract.operator.webhooks).toEqual({
      manifests: ["config/webhook/manifests.yaml"],
      port: 9443,
      certDirArg: "--webhook-cert-path",
      conversion: [],
    });
    expect(prose(text)).toContain("Found: mwidget.kb.io (mutating), vwidget.kb.io (validating).");
    expect(prose(text)).toContain("no flag for the webhook server's port found");
    expect(contractSchema.safeParse(parse(text)).success).toBe(true);
    const withPort = write({
      webhooks: {
        files: ["/repo/config/webhook/manifests.yaml"],
        webhooks: ["v (validating)"],
        portArg: { arg: "--webhook-port", why: "cmd/main.go defines the flag --webhook-port" },
      },
    });
    expect((parse(withPort) as { operator: { webhooks: unknown } }).operator.webhooks).toMatchObject({
      portArg: "--webhook-port",
    });
  });

  it("leaves the namespace variable to the kit", () => {
    const text = write({
      namespaced: { env: "WATCH_NAMESPACE", why: "cmd/main.go reads WATCH_NAMESPACE" },
      environment: [{ name: "WATCH_NAMESPACE", file: "cmd/main.go", how: "os.Getenv" }],
    });
    expect((parse(text) as { operator: { env: unknown } }).operator.env).toEqual({});
    expect(text).not.toContain("WATCH_NAMESPACE: read in");
  });
});

describe("goRunStartTimeout", () => {
  it.each([
    [undefined, "180s"],
    [4.2, "180s"],
    [80, "180s"],
    [300, "510s"],
    [600.5, "961s"],
  ])("a build of %s s gives %s", (seconds, value) => {
    expect(goRunStartTimeout(seconds).value).toBe(value);
  });
});

describe("clockField", () => {
  it("sets a horizon of one period and 15 s for a schedule that ticks every minute", () => {
    const field = clockField({ field: "schedule", ms: 60_000 });
    expect(field.commentedOut).toBeUndefined();
    expect(field.notes?.[0]).toContain("spec.schedule reads as a schedule every 60 s");
    const text = write({ schedule: { field: "schedule", ms: 60_000 } });
    expect(text).toMatch(/^clock:$/m);
    expect(text).toMatch(/^ {2}horizon: "75s"$/m);
  });

  it("leaves it commented out, saying why, for an hourly schedule or none", () => {
    expect(clockField({ field: "schedule", ms: 3_600_000 })).toMatchObject({ commentedOut: true });
    expect(clockField(undefined)).toMatchObject({ commentedOut: true });
    const text = write();
    expect(text).toMatch(/^# clock:$/m);
    expect(text).toMatch(/^# {3}horizon: "30s"$/m);
    expect(text).not.toMatch(/^clock:$/m);
  });
});
