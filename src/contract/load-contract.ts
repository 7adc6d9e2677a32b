import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { parseAllDocuments } from "yaml";
import type { z } from "zod";
import { UsageError } from "../errors.js";
import { splitApiVersion } from "../kube/api-version.js";
import type { KubeObject } from "../kube/kube-client.js";
import {
  contractSchema,
  DEFAULT_EXPLORATION_SEED,
  DEFAULT_GENERATED_UPDATES,
  type UPDATE_FAULT_LINES,
  durationMs,
  type ContractDocument,
  type SELECTABLE_SUITES,
} from "./contract-schema.js";
import type { OperatorDeploy } from "./operator-deploy.js";
import { CelCompileError, compileCelReadiness, type Readiness } from "./readiness.js";
import { errnoText } from "../util/files.js";
import { asRecord, isRecord } from "../util/records.js";
import type { GeneratedUpdate } from "./spec-path.js";
import { resolvePromises, type PromiseRule } from "./promises.js";
import type { OperatorMetrics } from "./operator-metrics.js";
import { resolveWebhooks, WEBHOOK_CONFIGURATION_KINDS, type OperatorWebhooks } from "./operator-webhooks.js";

/** What both ways of running the operator share. */
interface OperatorSettings {
  readonly env: Readonly<Record<string, string>>;
  readonly startTimeoutMs: number;
  /** How to confine it to one namespace; absent: it watches the whole cluster. */
  readonly namespaced?: { readonly arg: string } | { readonly env: string };
}

/** `operator.command`: the operator as a local process. */
export interface ProcessOperator extends OperatorSettings {
  readonly mode: "process";
  readonly argv: readonly [string, ...string[]];
  readonly cwd: string;
  readonly passThroughEnv: readonly string[];
  /** Its webhooks, served by the process (`operator.webhooks`); absent: none. */
  readonly webhooks?: OperatorWebhooks;
  /** Where it publishes its work queues' metrics (`operator.metrics`); absent: silence alone decides quiescence. */
  readonly metrics?: OperatorMetrics;
}

/** `operator.deploy`: the operator in the cluster, from its image and manifests. */
export interface DeployedOperator extends OperatorSettings {
  readonly mode: "deployed";
  readonly deploy: OperatorDeploy;
  /** The contract's directory: the manifests' paths are relative to it. */
  readonly dir: string;
}

/** The contract as the runner uses it: defaults filled in, paths absolute, files read, durations in ms. */
export interface Contract {
  /** Absolute path of the contract file. */
  readonly file: string;
  readonly operator: ProcessOperator | DeployedOperator;
  /** The CRD manifests, read and checked. */
  readonly crds: readonly { readonly file: string; readonly object: KubeObject }[];
  readonly sample: { readonly file: string; readonly object: KubeObject };
  /** The CRD that serves the sample's kind, and its plural. */
  readonly customResource: {
    readonly group: string;
    readonly version: string;
    readonly resource: string;
    readonly kind: string;
  };
  /** What the sample needs to exist first (`fixtures`), each object with the file it was read from. */
  readonly fixtures: readonly { readonly file: string; readonly object: KubeObject }[];
  /** Local images loaded into a kind cluster before the run (the children's operands). */
  readonly images: readonly string[];
  readonly updates: readonly Readonly<Record<string, unknown>>[];
  /**
   * Spec exploration, as the contract asks for it (`generatedUpdates`): at
   * most `max` updates made up from the CRD's schema, chosen in the order
   * `seed` fixes (run-time work: explore-spec.ts). Absent: none.
   */
  readonly exploration?: { readonly max: number; readonly seed: number };
  /**
   * The updates the run made up (explore-spec.ts fills them in once the API
   * server has checked them): specs updates.length+1, ..., each the spec of
   * the contract's last update with one change (specPath). Absent: none.
   */
  readonly generatedUpdates?: readonly GeneratedUpdate[];
  /**
   * Which writes on the way to each update get a fault (`updateFaults`):
   * `lines` chooses among each path's writes, `generatedUpdates` how many
   * of the generated updates' paths are swept (update-paths.ts).
   */
  readonly updateFaults: {
    readonly lines: (typeof UPDATE_FAULT_LINES)[number];
    readonly generatedUpdates: number;
  };
  readonly readiness: Readiness;
  /**
   * `clock.horizon`: how long after the sample's create every life waits for
   * what the operator's clock makes; `clock.onePerTick`: the objects it makes
   * one of per tick.
   */
  readonly clock: {
    readonly horizonMs?: number;
    readonly onePerTick?: readonly { readonly kind: string; readonly name?: string }[];
  };
  readonly quietPeriodMs: number;
  readonly timeouts: { readonly convergeMs: number; readonly crdEstablishedMs: number };
  readonly ignoreWrites: readonly { readonly group: string; readonly resource: string }[];
  readonly drift: { readonly include: readonly string[]; readonly exclude: readonly string[] };
  readonly suites: readonly (typeof SELECTABLE_SUITES)[number][];
  /** What each object keeps stable, and its volatile fields (docs/contract.md, "Promises"). */
  readonly promises: readonly PromiseRule[];
  readonly waivers: readonly Waiver[];
}

/** The contract's generatedUpdates setting, resolved: undefined when it makes none. */
function exploration(
  setting: boolean | { readonly max: number; readonly seed: number },
): Contract["exploration"] {
  if (setting === false) return undefined;
  const resolved =
    setting === true ? { max: DEFAULT_GENERATED_UPDATES, seed: DEFAULT_EXPLORATION_SEED } : setting;
  return resolved.max === 0 ? undefined : resolved;
}

/** A known failure accepted for now (docs/contract.md, "Waivers"). */
export interface Waiver {
  /** Where it is written: "waivers[0]". */
  readonly rule: string;
  readonly check: string;
  /** A pattern over scenario targets ("*": any run of characters); absent: every scenario. */
  readonly target?: string;
  readonly reason: string;
  /** "2026-12-31": the last day (UTC) it holds. */
  readonly until?: string;
}

/**
 * Reads, validates and resolves a contract file. Every error is a
 * UsageError (exit code 2) naming the file, the field path, the bad value
 * and the expected form.
 */
export async function loadContract(
  path: string,
  options: {
    /** The setting that named the file, as the user spells it ("--config", "input config"). */
    readonly setting?: string;
    /** True when no setting named it and the default file was tried. */
    readonly defaulted?: boolean;
  } = {},
): Promise<Contract> {
  const file = resolve(path);
  const text = await readFile(file, "utf8").catch((error: unknown) => {
    const named = options.setting === undefined ? path : `${options.setting} ${path}`;
    const hint =
      options.defaulted === true && isRecord(error) && error.code === "ENOENT"
        ? `; name the contract with ${options.setting ?? "the config setting"}, or write one with \`npx reconcile-conformance init\``
        : "";
    throw new UsageError(
      "config/unreadable",
      options.defaulted === true
        ? `no contract given, and the default ${path} cannot be read: ${errnoText(error)}${hint}`
        : `${named}: cannot read the contract: ${errnoText(error)}`,
    );
  });
  const document = parseSingleYaml(text, file);
  const parsed = contractSchema.safeParse(document, { reportInput: true });
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${describeIssue(issue)}`);
    throw new UsageError("config/invalid", `${file}: the contract is not valid:\n${lines.join("\n")}`);
  }
  return resolveContract(file, parsed.data);
}

async function resolveContract(file: string, doc: ContractDocument): Promise<Contract> {
  const dir = dirname(file);
  const at = (relative: string) => (isAbsolute(relative) ? relative : resolve(dir, relative));

  const crds = await Promise.all(
    doc.crds.map(async (relative, index) => {
      const field = `crds[${index}]`;
      const objects = await readManifests(file, field, at(relative));
      const found = objects.filter((o) => o.kind === "CustomResourceDefinition");
      if (found.length === 0) {
        throw new UsageError(
          "config/invalid",
          `${file}: ${field}: ${relative} holds no CustomResourceDefinition (kinds: ${objects.map((o) => o.kind).join(", ") || "none"})`,
        );
      }
      return found.map((object) => ({ file: at(relative), object }));
    }),
  );
  const [sample, ...extra] = await readManifests(file, "sample", at(doc.sample));
  if (!sample || extra.length > 0) {
    throw new UsageError("config/invalid", `${file}: sample: ${doc.sample} must hold exactly one object`);
  }
  if (!sample.apiVersion || !sample.kind || !sample.metadata?.name) {
    throw new UsageError(
      "config/invalid",
      `${file}: sample: ${doc.sample} needs apiVersion, kind and metadata.name (got ${sample.apiVersion ?? "?"} ${sample.kind ?? "?"} ${sample.metadata?.name ?? "?"})`,
    );
  }
  const fixtures = (
    await Promise.all(
      doc.fixtures.map(async (relative, index) => {
        const field = `fixtures[${index}]`;
        const objects = await readManifests(file, field, at(relative));
        return objects.map((object) => {
          const name = object.metadata?.name;
          if (!object.apiVersion || !object.kind || !name) {
            throw new UsageError(
              "config/invalid",
              `${file}: ${field}: ${relative} holds an object without apiVersion, kind or metadata.name`,
            );
          }
          if (object.metadata?.namespace !== undefined) {
            throw new UsageError(
              "config/invalid",
              `${file}: ${field}: ${relative}: ${object.kind} ${name} names namespace ${object.metadata.namespace}: leave it out, every scenario gets its own copy in its own namespace`,
            );
          }
          return { file: at(relative), object };
        });
      }),
    )
  ).flat();
  const customResource = servingCrd(
    file,
    sample,
    crds.flat().map((c) => c.object),
  );

  let readiness: Readiness;
  if (typeof doc.readiness === "string") {
    readiness = { kind: doc.readiness };
  } else {
    try {
      readiness = compileCelReadiness(doc.readiness.cel);
    } catch (error) {
      if (!(error instanceof CelCompileError)) throw error;
      const where = error.position ? ` at line ${error.position.line}, column ${error.position.column}` : "";
      throw new UsageError(
        "config/invalid",
        `${file}: readiness.cel: ${JSON.stringify(doc.readiness.cel)} does not compile${where}: ${error.message}`,
      );
    }
  }

  const operator = resolveOperator(file, doc.operator, at);
  const webhooks = await readWebhooks(file, doc.operator.webhooks, at, crds.flat());
  return {
    file,
    operator: webhooks && operator.mode === "process" ? { ...operator, webhooks } : operator,
    crds: crds.flat(),
    sample: { file: at(doc.sample), object: sample },
    customResource,
    fixtures,
    images: doc.images,
    updates: doc.updates,
    ...(exploration(doc.generatedUpdates) ? { exploration: exploration(doc.generatedUpdates) } : {}),
    updateFaults: doc.updateFaults,
    readiness,
    clock: {
      ...(doc.clock.horizon === undefined ? {} : { horizonMs: durationMs(doc.clock.horizon) }),
      ...(doc.clock.onePerTick.length === 0 ? {} : { onePerTick: doc.clock.onePerTick }),
    },
    quietPeriodMs: durationMs(doc.quietPeriod),
    timeouts: {
      convergeMs: durationMs(doc.timeouts.converge),
      crdEstablishedMs: durationMs(doc.timeouts.crdEstablished),
    },
    ignoreWrites: doc.ignoreWrites,
    drift: doc.drift,
    suites: doc.suites,
    promises: resolvePromises(doc.promises),
    waivers: doc.waivers.map((w, index) => ({ rule: `waivers[${index}]`, ...w })),
  };
}

/** `operator.webhooks` with its configurations read; each conversion name must be a CRD of `crds`. */
async function readWebhooks(
  file: string,
  document: ContractDocument["operator"]["webhooks"],
  at: (relative: string) => string,
  crds: readonly { readonly object: KubeObject }[],
): Promise<OperatorWebhooks | undefined> {
  if (document === undefined) return undefined;
  const configurations = (
    await Promise.all(
      document.manifests.map(async (relative, index) => {
        const field = `operator.webhooks.manifests[${index}]`;
        const objects = await readManifests(file, field, at(relative));
        if (objects.length === 0) {
          throw new UsageError("config/invalid", `${file}: ${field}: ${relative} holds no object`);
        }
        return objects.map((object) => {
          if (!WEBHOOK_CONFIGURATION_KINDS.includes(object.kind as never) || !object.metadata?.name) {
            throw new UsageError(
              "config/invalid",
              `${file}: ${field}: ${relative} holds ${object.kind ?? "an object without a kind"} ${object.metadata?.name ?? ""}: expected only ${WEBHOOK_CONFIGURATION_KINDS.join(" and ")} objects with a name`.replace(
                "  ",
                " ",
              ),
            );
          }
          return { file: at(relative), object };
        });
      }),
    )
  ).flat();
  const names = crds.map((c) => c.object.metadata?.name ?? "");
  document.conversion.forEach((name, index) => {
    if (!names.includes(name)) {
      throw new UsageError(
        "config/invalid",
        `${file}: operator.webhooks.conversion[${index}]: no CRD of crds is named ${JSON.stringify(name)} (crds: ${names.join(", ")})`,
      );
    }
  });
  // A CRD that already sends its conversions to a webhook (kubebuilder's patched CRDs) is the operator's to convert.
  const converting = crds
    .filter((c) => asRecord(asRecord(c.object.spec).conversion).strategy === "Webhook")
    .map((c) => c.object.metadata?.name ?? "");
  const conversion = [...new Set([...document.conversion, ...converting])];
  return resolveWebhooks({ ...document, conversion }, configurations);
}

/** The group, served version, plural and kind of the CRD that serves the sample. */
function servingCrd(file: string, sample: KubeObject, crds: KubeObject[]): Contract["customResource"] {
  const [group, version] = splitApiVersion(sample.apiVersion ?? "");
  for (const crd of crds) {
    const spec = (crd.spec ?? {}) as {
      group?: string;
      names?: { kind?: string; plural?: string };
      versions?: { name?: string; served?: boolean }[];
    };
    if (spec.group !== group || spec.names?.kind !== sample.kind) continue;
    if (!spec.versions?.some((v) => v.name === version && v.served !== false)) continue;
    return {
      group: group ?? "",
      version: version ?? "",
      resource: spec.names?.plural ?? "",
      kind: sample.kind ?? "",
    };
  }
  throw new UsageError(
    "config/invalid",
    `${file}: sample: no CRD in crds serves ${sample.kind} in ${sample.apiVersion}; expected one whose spec.group is "${group}", spec.names.kind "${sample.kind}" and a served version "${version}"`,
  );
}

/** The openAPIV3Schema of the CRD version that serves the custom resource; {} when it has none. */
export function servingSchema(
  crds: readonly KubeObject[],
  served: Contract["customResource"],
): Record<string, unknown> {
  for (const crd of crds) {
    const spec = asRecord(crd.spec);
    if (spec.group !== served.group || asRecord(spec.names).kind !== served.kind) continue;
    const versions = Array.isArray(spec.versions) ? spec.versions : [];
    const version = versions.map(asRecord).find((v) => v.name === served.version);
    return asRecord(asRecord(version?.schema).openAPIV3Schema);
  }
  return {};
}

async function readManifests(contract: string, field: string, path: string): Promise<KubeObject[]> {
  const text = await readFile(path, "utf8").catch((error: unknown) => {
    throw new UsageError("config/invalid", `${contract}: ${field}: cannot read ${path}: ${errnoText(error)}`);
  });
  const documents = parseAllDocuments(text);
  const objects: KubeObject[] = [];
  for (const document of documents) {
    if (document.errors.length > 0) {
      throw new UsageError(
        "config/invalid",
        `${contract}: ${field}: ${path} is not valid YAML: ${document.errors[0]?.message ?? ""}`,
      );
    }
    const value: unknown = document.toJS();
    if (value === null || value === undefined) continue;
    if (typeof value !== "object" || Array.isArray(value)) {
      throw new UsageError(
        "config/invalid",
        `${contract}: ${field}: ${path} holds something that is not a Kubernetes object`,
      );
    }
    objects.push(value as KubeObject);
  }
  return objects;
}

function parseSingleYaml(text: string, file: string): unknown {
  const documents = parseAllDocuments(text);
  const errors = documents.flatMap((d) => d.errors);
  if (errors.length > 0) {
    throw new UsageError("config/invalid", `${file}: not valid YAML: ${errors[0]?.message ?? ""}`);
  }
  const values = documents.map((d) => d.toJS() as unknown).filter((v) => v !== null && v !== undefined);
  if (values.length !== 1) {
    throw new UsageError(
      "config/invalid",
      `${file}: expected one YAML document with the contract, found ${values.length}`,
    );
  }
  return values[0];
}

function resolveOperator(
  file: string,
  operator: ContractDocument["operator"],
  at: (relative: string) => string,
): ProcessOperator | DeployedOperator {
  const settings: OperatorSettings = {
    env: operator.env,
    startTimeoutMs: durationMs(operator.startTimeout),
    ...(operator.namespaced?.arg ? { namespaced: { arg: operator.namespaced.arg } } : {}),
    ...(operator.namespaced?.env ? { namespaced: { env: operator.namespaced.env } } : {}),
  };
  const dir = dirname(file);
  if (operator.deploy) return { mode: "deployed", ...settings, deploy: operator.deploy, dir };
  const [program, ...args] = operator.command ?? [];
  // The schema lets neither through; this keeps the type honest.
  if (program === undefined) throw new UsageError("config/invalid", `${file}: operator.command: empty`);
  return {
    mode: "process",
    ...settings,
    argv: [program, ...args],
    cwd: operator.workingDir ? at(operator.workingDir) : dir,
    passThroughEnv: operator.passThroughEnv,
    ...(operator.metrics
      ? {
          metrics: {
            args: operator.metrics.args,
            env: operator.metrics.env,
            path: operator.metrics.path,
            settleMs: durationMs(operator.metrics.settle),
          },
        }
      : {}),
  };
}

/** "operator.command: expected ..., got 42" */
function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.length === 0 ? "(top level)" : formatPath(issue.path);
  if (issue.code === "unrecognized_keys") {
    return `${path}: unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}`;
  }
  const got = "input" in issue && issue.input !== undefined ? `, got ${preview(issue.input)}` : "";
  return `${path}: ${issue.message}${got}`;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((part, index) =>
      typeof part === "number" ? `[${part}]` : `${index === 0 ? "" : "."}${String(part)}`,
    )
    .join("");
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
