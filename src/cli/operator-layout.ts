import { findMetrics, type MetricsFound } from "./metrics-layout.js";
import { findWebhooks, type WebhooksFound } from "./webhook-layout.js";
import { basename } from "node:path";
import { parseAllDocuments } from "yaml";
import { UsageError } from "../errors.js";
import { splitApiVersion } from "../kube/api-version.js";
import { errnoText } from "../util/files.js";
import { asRecord, isRecord } from "../util/records.js";
import {
  chooseReadiness,
  fieldsLeftAlone,
  proposeStarterUpdates,
  schedulePeriodMs,
  type FieldLeftAlone,
  type ProposedUpdate,
} from "../contract/crd-schema-guesses.js";
import {
  defaultCommand,
  detectNamespaced,
  environmentReads,
  explicitCommand,
  findMain,
  goSources,
  type Command,
  type EnvironmentRead,
  type MainPackage,
  type Namespaced,
} from "./main-package.js";
import {
  CRD_DIRS,
  SAMPLE_DIRS,
  type DirectoryRead,
  type FileRead,
  type RepositoryRead,
} from "./repository-read.js";
import { displayPath } from "./user-paths.js";

// What init finds in an operator's repository, decided from what was read there (RepositoryRead,
// plain data gathered by init-command.ts): the CRDs and the sample here, the main package and its
// command in main-package.ts, put together as one OperatorLayout. No I/O here; a read that failed is data too,
// and becomes the error it always was when (and only when) discovery reaches it.

// ---------------------------------------------------------------- what was found

/** One kind a CRD defines, with its versions. */
export interface CrdKind {
  readonly file: string;
  /** metadata.name: two files defining the same CRD cannot both be installed. */
  readonly name: string;
  readonly group: string;
  readonly kind: string;
  readonly versions: readonly { readonly name: string; readonly served: boolean; readonly schema: unknown }[];
}

/** A file left out because the CRDs it defines are defined by an earlier file (variants of one CRD). */
export interface SkippedCrd {
  readonly file: string;
  readonly sameAs: string;
}

/** The CRD manifests to install. */
export interface CrdsFound {
  /** The files that define them, in order. */
  readonly files: readonly string[];
  readonly kinds: readonly CrdKind[];
  readonly skipped: readonly SkippedCrd[];
  /** "--crds", or "found in <layout directory>". */
  readonly origin: string;
}

/** A custom resource of a sample file. */
export interface SampleObject {
  readonly file: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly spec: unknown;
}

/** Everything init writes into the starter contract and says about it. */
export interface OperatorLayout {
  readonly crds: CrdsFound;
  /** The sample every scenario creates, of a kind the CRDs serve. */
  readonly sample: SampleObject;
  /** The other samples found beside it. */
  readonly others: readonly SampleObject[];
  /** Undefined when no main.go was found. */
  readonly main: MainPackage | undefined;
  readonly command: Command;
  readonly namespaced: Namespaced;
  /** Example updates derived from the CRD's schema (two, of different fields, when it offers them). */
  readonly updates: readonly ProposedUpdate[];
  /** Spec strings of the sample left out of the updates, and why (a URL, a pattern, a form the kit cannot vary). */
  readonly leftAlone: readonly FieldLeftAlone[];
  /** A spec field of the sample that reads as a schedule of the operator's own, and its period. */
  readonly schedule: { readonly field: string; readonly ms: number } | undefined;
  readonly readiness: "conditions" | "quiet";
  /** The environment variables the main and controller packages read, in the order first read. */
  readonly environment: readonly EnvironmentRead[];
  /** Its admission webhooks' configurations (kubebuilder's config/webhook); undefined: none found. */
  readonly webhooks: WebhooksFound | undefined;
  /** The flags of its metrics endpoint (kubebuilder's --metrics-bind-address); undefined: none found. */
  readonly metrics: MetricsFound | undefined;
}

/**
 * The layout of the operator in `read.dir`, kubebuilder's first: the CRDs
 * (--crds, else the first layout directory that has any), a sample of a kind
 * they serve (--sample, else the first in the layout), the main package, the
 * command (--command, else `go run` of the main package), how it confines
 * itself to a namespace, and what the CRD's schema suggests for updates and
 * readiness. UsageError when no CRD or no sample is found, or a file read or
 * parsed on the way is broken; the checks run in that order.
 */
export function operatorLayout(read: RepositoryRead): OperatorLayout {
  const crds = findCrds(read);
  const { sample, others } = findSample(read, crds.kinds);
  const served = servingKind(sample, crds.kinds);
  const main = findMain(read);
  const command = read.command === undefined ? defaultCommand(main) : explicitCommand(read.command);
  const namespaced = detectNamespaced(main);
  const schema = versionSchema(served, sample);
  return {
    crds,
    sample,
    others,
    main,
    command,
    namespaced,
    updates: proposeStarterUpdates(sample.spec, schema),
    leftAlone: fieldsLeftAlone(sample.spec, schema),
    schedule: schedulePeriodMs(sample.spec),
    readiness: chooseReadiness(schema),
    environment: environmentReads(goSources(read)),
    webhooks: findWebhooks(read, main),
    metrics: findMetrics(main),
  };
}

// ---------------------------------------------------------------- CRDs

function findCrds(read: RepositoryRead): CrdsFound {
  if (read.crds !== undefined) {
    const { flag, path, read: found } = read.crds;
    if ("error" in found) {
      throw new UsageError(
        "init/no-crds",
        `init: --crds ${flag}: cannot read ${path}: ${errnoText(found.error)}`,
      );
    }
    const crds = crdsIn(
      "directory" in found ? listed(found.directory) : [{ path, read: found.file }],
      read.cwd,
    );
    if (crds.files.length === 0) {
      throw new UsageError(
        "init/no-crds",
        `init: --crds ${flag}: no CustomResourceDefinition in ${"directory" in found ? `any .yaml file in ${path}` : path}`,
      );
    }
    return { ...crds, origin: "--crds" };
  }
  for (const candidate of CRD_DIRS) {
    const directory = read.directories.get(candidate);
    if (directory === undefined) continue;
    const crds = crdsIn(listed(directory), read.cwd);
    if (crds.files.length > 0) return { ...crds, origin: `found in ${candidate}` };
  }
  throw new UsageError(
    "init/no-crds",
    `init: no CustomResourceDefinition found in ${read.dir}: looked in ${CRD_DIRS.join(", ")} (kubebuilder writes them to config/crd/bases with \`make manifests\`); give the directory that holds them with --crds DIR`,
  );
}

/** The files of a directory read, in path order; the listing's own error as it was raised. */
function listed(directory: DirectoryRead): readonly { readonly path: string; readonly read: FileRead }[] {
  if ("error" in directory) throw directory.error;
  return [...directory.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function crdsIn(
  files: readonly { readonly path: string; readonly read: FileRead }[],
  cwd: string,
): { files: string[]; kinds: CrdKind[]; skipped: SkippedCrd[] } {
  const kinds: CrdKind[] = [];
  const holding: string[] = [];
  const skipped: SkippedCrd[] = [];
  for (const { path: file, read } of files) {
    const found = yamlObjects(file, read, displayPath(file, cwd))
      .filter((o) => o.kind === "CustomResourceDefinition")
      .map((o) => crdKind(file, o));
    const earlier = found.map((k) => kinds.find((seen) => seen.name === k.name));
    const [first] = earlier;
    if (first && earlier.every((e) => e !== undefined)) {
      skipped.push({ file, sameAs: first.file });
      continue;
    }
    if (found.length > 0) holding.push(file);
    kinds.push(...found);
  }
  return { files: holding, kinds, skipped };
}

function crdKind(file: string, crd: Record<string, unknown>): CrdKind {
  const spec = asRecord(crd.spec);
  const names = asRecord(spec.names);
  const versions = Array.isArray(spec.versions) ? spec.versions.map(asRecord) : [];
  const name = asRecord(crd.metadata).name;
  return {
    file,
    name: typeof name === "string" ? name : "",
    group: typeof spec.group === "string" ? spec.group : "",
    kind: typeof names.kind === "string" ? names.kind : "",
    versions: versions.map((v) => ({
      name: typeof v.name === "string" ? v.name : "",
      served: v.served !== false,
      schema: asRecord(v.schema).openAPIV3Schema,
    })),
  };
}

/** The CRD kind and version that serve the sample (the rule loadContract applies); undefined when none. */
function servingKind(sample: SampleObject, kinds: readonly CrdKind[]): CrdKind | undefined {
  const [group, version] = splitApiVersion(sample.apiVersion);
  return kinds.find(
    (k) =>
      k.group === group && k.kind === sample.kind && k.versions.some((v) => v.name === version && v.served),
  );
}

function servedList(kinds: readonly CrdKind[]): string {
  return kinds
    .map(
      (k) =>
        `${k.kind} (${k.versions
          .filter((v) => v.served)
          .map((v) => `${k.group}/${v.name}`)
          .join(", ")})`,
    )
    .join(", ");
}

/** The openAPIV3Schema of the CRD version that serves the sample; {} when there is none. */
function versionSchema(kind: CrdKind | undefined, sample: SampleObject): Record<string, unknown> {
  const [, version] = splitApiVersion(sample.apiVersion);
  return asRecord(kind?.versions.find((v) => v.name === version)?.schema);
}

// ---------------------------------------------------------------- the sample

/** --sample, else the first sample in the layout whose kind the CRDs serve (and the others found beside it). */
function findSample(
  read: RepositoryRead,
  kinds: readonly CrdKind[],
): { sample: SampleObject; others: SampleObject[] } {
  if (read.sample !== undefined) {
    const { flag, path: file, read: text } = read.sample;
    const objects = yamlObjects(file, text, `--sample ${flag}`);
    const [object, ...extra] = objects;
    if (!object || extra.length > 0) {
      throw new UsageError(
        "init/bad-sample",
        `init: --sample ${flag}: expected exactly one object in ${file}, found ${objects.length}`,
      );
    }
    const sample = sampleOf(file, object);
    if (!sample) {
      throw new UsageError(
        "init/bad-sample",
        `init: --sample ${flag}: the object in ${file} needs apiVersion, kind and metadata.name`,
      );
    }
    if (!servingKind(sample, kinds)) {
      throw new UsageError(
        "init/sample-not-served",
        `init: --sample ${flag}: no CRD serves its kind ${sample.kind} in ${sample.apiVersion}; the CRDs serve ${servedList(kinds)}`,
      );
    }
    return { sample, others: [] };
  }
  const seen: string[] = [];
  for (const candidate of SAMPLE_DIRS) {
    const directory = read.directories.get(candidate);
    if (directory === undefined) continue;
    const samples: SampleObject[] = [];
    for (const { path: file, read: text } of listed(directory)) {
      const objects = yamlObjects(file, text, displayPath(file, read.cwd));
      const object = objects.length === 1 ? objects[0] : undefined;
      const sample =
        object && object.kind !== "CustomResourceDefinition" ? sampleOf(file, object) : undefined;
      if (sample) samples.push(sample);
    }
    const chosen = samples.find((s) => servingKind(s, kinds));
    if (chosen) return { sample: chosen, others: samples.filter((s) => s !== chosen) };
    if (samples.length > 0) {
      seen.push(
        `${candidate} (${samples.map((s) => `${basename(s.file)}: ${s.kind} ${s.apiVersion}`).join(", ")})`,
      );
    }
  }
  throw new UsageError(
    "init/no-sample",
    `init: no sample of a kind the CRDs serve (${servedList(kinds)}) in ${read.dir}: looked in ${SAMPLE_DIRS.join(", ")}` +
      (seen.length > 0 ? `; found only ${seen.join("; ")}` : "") +
      "; give one with --sample FILE",
  );
}

function sampleOf(file: string, object: Record<string, unknown>): SampleObject | undefined {
  const name = asRecord(object.metadata).name;
  if (typeof object.apiVersion !== "string" || typeof object.kind !== "string" || typeof name !== "string") {
    return undefined;
  }
  return { file, apiVersion: object.apiVersion, kind: object.kind, name, spec: object.spec };
}

/** The objects of a (multi-document) YAML file; errors name `what` (unreadable) or the file and the line. */
function yamlObjects(file: string, read: FileRead, what: string): Record<string, unknown>[] {
  if ("error" in read) {
    throw new UsageError("init/unreadable", `init: ${what}: cannot read ${file}: ${errnoText(read.error)}`);
  }
  const objects: Record<string, unknown>[] = [];
  for (const document of parseAllDocuments(read.text)) {
    const [error] = document.errors;
    if (error) {
      const line = error.linePos?.[0];
      const at = line ? `:${line.line}:${line.col}` : "";
      const message = (error.message.split("\n")[0] ?? "").replace(/:$/, "");
      throw new UsageError("init/invalid-yaml", `init: ${file}${at}: not valid YAML: ${message}`);
    }
    const value: unknown = document.toJS();
    if (isRecord(value)) objects.push(value);
  }
  return objects;
}
