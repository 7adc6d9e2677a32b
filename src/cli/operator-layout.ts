import { basename, dirname, extname, join } from "node:path";
import { parseAllDocuments } from "yaml";
import { UsageError } from "../errors.js";
import { errnoText } from "../util/files.js";
import { asRecord, isRecord } from "../util/records.js";
import { commandWords } from "./command-words.js";
import {
  chooseReadiness,
  proposeStarterUpdates,
  type ProposedUpdate,
} from "../contract/crd-schema-guesses.js";
import { displayPath, toPosix } from "./user-paths.js";

// What init finds in an operator's repository, decided from what was read there (RepositoryRead,
// plain data gathered by init-command.ts): the CRDs, the sample, the main package, the command,
// how the operator confines itself to a namespace. No I/O here; a read that failed is data too,
// and becomes the error it always was when (and only when) discovery reaches it.

/** Where the kubebuilder layout (first), operator-sdk's older one and plain projects keep CRDs. */
export const CRD_DIRS = ["config/crd/bases", "deploy/crds", "crds"] as const;
/** Where the same layouts keep samples of the custom resources. */
export const SAMPLE_DIRS = ["config/samples", "deploy/crds", "samples"] as const;
/** Where the controllers' packages are in the layouts init knows (kubebuilder's, operator-sdk's older one). */
export const CONTROLLER_DIRS = [
  "internal/controller",
  "controllers",
  "pkg/controller",
  "internal/controllers",
] as const;

/** Where the main package's main.go is, first match wins. */
export const MAIN_FILES = ["cmd/main.go", "main.go", "cmd/manager/main.go"] as const;
/** What kubebuilder's `make build` writes; the command when no main.go is found and none is given. */
export const PLACEHOLDER_COMMAND = ["./bin/manager", "--leader-elect=false"] as const;

/** Every layout directory discovery may look in (CRD_DIRS and SAMPLE_DIRS), each once. */
export const LAYOUT_DIRS: readonly string[] = [...new Set<string>([...CRD_DIRS, ...SAMPLE_DIRS])];

/** A file that may hold manifests: .yaml or .yml, but not a kustomization. */
export function isManifestName(name: string): boolean {
  return [".yaml", ".yml"].includes(extname(name)) && !/^kustomization\.ya?ml$/.test(name);
}

/** A Go source of the main package itself (not its tests). */
export function isMainPackageSource(name: string): boolean {
  return name.endsWith(".go") && !name.endsWith("_test.go");
}

// ---------------------------------------------------------------- what was read

/** What reading one file gave: its text, or the error the read failed with. */
export type FileRead = { readonly text: string } | { readonly error: unknown };

/** A directory's manifest files (isManifestName), each with what reading it gave; or why listing it failed. */
export type DirectoryRead =
  | { readonly files: readonly { readonly path: string; readonly read: FileRead }[] }
  | { readonly error: unknown };

/** A main package's directory: its sources (isMainPackageSource) with their reads; or why listing it failed. */
export type PackageRead =
  | { readonly files: readonly { readonly name: string; readonly read: FileRead }[] }
  | { readonly error: unknown };

/** What init read of a repository, and the flags that steer discovery. Paths are absolute. */
export interface RepositoryRead {
  /** The project directory (--dir). */
  readonly dir: string;
  /** The working directory, for naming files in messages as the user sees them. */
  readonly cwd: string;
  /** Each of LAYOUT_DIRS (relative to dir) that is a directory, listed; the others are absent. */
  readonly directories: ReadonlyMap<string, DirectoryRead>;
  /** Each of MAIN_FILES (relative to dir) that exists, with its directory's package; the others are absent. */
  readonly mains: ReadonlyMap<string, PackageRead>;
  /** Each of CONTROLLER_DIRS (relative to dir) that is a directory, with its package's sources. */
  readonly controllers?: ReadonlyMap<string, PackageRead>;
  /** --crds: what stat found at its path, and what was read there. */
  readonly crds?: {
    readonly flag: string;
    readonly path: string;
    readonly read:
      { readonly error: unknown } | { readonly directory: DirectoryRead } | { readonly file: FileRead };
  };
  /** --sample, and what reading it gave. */
  readonly sample?: { readonly flag: string; readonly path: string; readonly read: FileRead };
  /** --command, as given. */
  readonly command?: string;
}

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

/** The operator's main package. */
export interface MainPackage {
  /** The main.go found, absolute. */
  readonly file: string;
  /** The same, relative to the project directory. */
  readonly name: string;
  /** The text of every non-test .go file in its directory (the whole main package). */
  readonly text: string;
  /** What `go run` is given: the file when it is the package's only file, else its directory. */
  readonly target: string;
}

/** The operator's command line. */
export interface Command {
  readonly words: readonly string[];
  /** Where the words come from, for the log. */
  readonly origin: string;
  /** Whether it builds with `go run` (slow on the first start). */
  readonly goRun: boolean;
  /** Why these words, for the comment above them. */
  readonly notes: string;
}

/** How the operator confines itself to a namespace (`why`), or why init found no way (`none`). */
export type Namespaced =
  | { readonly arg: string; readonly why: string }
  | { readonly env: string; readonly why: string }
  | { readonly none: string };

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
  readonly readiness: "conditions" | "quiet";
  /** The environment variables the main and controller packages read, in the order first read. */
  readonly environment: readonly EnvironmentRead[];
}

/** An environment variable the operator's code reads. */
export interface EnvironmentRead {
  readonly name: string;
  /** Where it is read first ("cmd/main.go"), relative to the project directory. */
  readonly file: string;
  /** "os.Getenv" or "os.LookupEnv". */
  readonly how: string;
}

/**
 * Variables the kit gives the operator itself, or that mean nothing in a
 * run: never proposed for operator.env.
 */
const KIT_SETS = new Set(["KUBECONFIG", "HOME", "PATH", "USER", "TMPDIR"]);

/**
 * The environment variables `os.Getenv("X")` / `os.LookupEnv("X")` read in
 * the given Go sources, each once, in order. Names built at run time are not
 * seen. Pure.
 */
export function environmentReads(
  sources: readonly { readonly file: string; readonly text: string }[],
): EnvironmentRead[] {
  const found = new Map<string, EnvironmentRead>();
  for (const { file, text } of sources) {
    for (const match of text.matchAll(/\bos\.(Getenv|LookupEnv)\(\s*"([A-Za-z_][A-Za-z0-9_]*)"\s*\)/g)) {
      const [, how = "", name = ""] = match;
      if (!found.has(name) && !KIT_SETS.has(name)) found.set(name, { name, file, how: `os.${how}` });
    }
  }
  return [...found.values()];
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
    readiness: chooseReadiness(schema),
    environment: environmentReads(goSources(read)),
  };
}

/** The Go sources of the main package and of the controller packages, each named relative to the project. */
function goSources(read: RepositoryRead): { file: string; text: string }[] {
  const packages = [...read.mains.entries()].map(([main, found]) => [toPosix(dirname(main)), found] as const);
  const controllers = [...(read.controllers ?? new Map<string, PackageRead>()).entries()];
  return [...packages, ...controllers].flatMap(([dir, found]) =>
    "error" in found
      ? []
      : found.files.flatMap(({ name, read: source }) =>
          "error" in source ? [] : [{ file: dir === "." ? name : `${dir}/${name}`, text: source.text }],
        ),
  );
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

function splitApiVersion(apiVersion: string): [string, string] {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? ["", apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
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

// ---------------------------------------------------------------- the main package and its command

/** The first of MAIN_FILES that exists, with its package's text; a failed read is raised as it was. */
function findMain(read: RepositoryRead): MainPackage | undefined {
  for (const candidate of MAIN_FILES) {
    const found = read.mains.get(candidate);
    if (found === undefined) continue;
    if ("error" in found) throw found.error;
    const sources = [...found.files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const texts = sources.map(({ read: source }) => {
      if ("error" in source) throw source.error;
      return source.text;
    });
    const relativeDir = toPosix(dirname(candidate));
    const target =
      sources.length === 1 ? `./${toPosix(candidate)}` : relativeDir === "." ? "." : `./${relativeDir}`;
    return { file: join(read.dir, candidate), name: toPosix(candidate), text: texts.join("\n"), target };
  }
  return undefined;
}

/**
 * `go run` of the main package, with the flags that let several copies run
 * side by side when main.go defines them: no leader election, no fixed
 * metrics or health-probe port (controller-runtime's "0" turns them off).
 * A program that defines --kubeconfig itself and does not use
 * controller-runtime (plain client-go) may ignore $KUBECONFIG: a shell
 * passes it as the flag.
 */
function defaultCommand(main: MainPackage | undefined): Command {
  if (!main) {
    return {
      words: PLACEHOLDER_COMMAND,
      origin: "placeholder: no main.go found",
      goRun: false,
      notes: `No main.go found (looked for ${MAIN_FILES.join(", ")}): this is kubebuilder's \`make build\` output as a placeholder. Replace it with the command that starts your operator, or build ./bin/manager before each run.`,
    };
  }
  const flags: string[] = [];
  if (main.text.includes('"leader-elect"')) flags.push("--leader-elect=false");
  if (main.text.includes('"metrics-bind-address"')) flags.push("--metrics-bind-address=0");
  if (main.text.includes('"health-probe-bind-address"')) flags.push("--health-probe-bind-address=0");
  let notes = `Found ${main.name}: \`go run\` builds and starts it (Go caches the build, so only the first start is slow).`;
  if (flags.length > 0) {
    notes +=
      " The flags after it let several copies run side by side, one per scenario: no leader election, and no fixed metrics or health-probe port (0 turns them off).";
  }
  const ownKubeconfigFlag = /\bString(?:Var)?P?\s*\(\s*(?:&[\w.]+\s*,\s*)?"kubeconfig"/.test(main.text);
  if (ownKubeconfigFlag && !main.text.includes("sigs.k8s.io/controller-runtime")) {
    notes += ` ${main.name} defines its own --kubeconfig flag and does not use controller-runtime: a plain client-go program may ignore KUBECONFIG, so the shell passes it as --kubeconfig.`;
    return {
      words: ["sh", "-c", `exec go run ${main.target} --kubeconfig="$KUBECONFIG" "$@"`, "operator", ...flags],
      origin: `go run of ${main.target}, with --kubeconfig`,
      goRun: true,
      notes,
    };
  }
  return {
    words: ["go", "run", main.target, ...flags],
    origin: `go run of ${main.target}`,
    goRun: true,
    notes,
  };
}

/** --command: its words (see commandWords). */
function explicitCommand(text: string): Command {
  const words = commandWords(text);
  return {
    words,
    origin: "given with --command",
    goRun: words.includes("go") && words.includes("run"),
    notes: "Given with --command.",
  };
}

/**
 * How the operator confines itself to one namespace, from its main package:
 * a flag whose name mentions a namespace (not the leader election's), else
 * WATCH_NAMESPACE (operator-sdk's convention).
 */
function detectNamespaced(main: MainPackage | undefined): Namespaced {
  if (!main)
    return { none: `no main.go found to look for a namespace flag (looked for ${MAIN_FILES.join(", ")})` };
  const where = main.name;
  const flagPattern =
    /\b(?:String|StringSlice|StringArray)(?:Var)?P?\s*\(\s*(?:&[\w.[\]]+\s*,\s*)?"([\w-]*namespace[\w-]*)"/gi;
  const names = [...main.text.matchAll(flagPattern)]
    .map((m) => m[1] ?? "")
    .filter((name) => name !== "" && !/leader|election/i.test(name));
  const rank = (name: string) => (name === "watch-namespace" ? 0 : /watch/i.test(name) ? 1 : 2);
  const [flag] = [...new Set(names)].sort((a, b) => rank(a) - rank(b));
  if (flag) return { arg: `--${flag}`, why: `${where} defines the flag --${flag}` };
  if (/\bWATCH_NAMESPACE\b/.test(main.text))
    return { env: "WATCH_NAMESPACE", why: `${where} reads WATCH_NAMESPACE` };
  return { none: `${where} defines no namespace flag and does not read WATCH_NAMESPACE` };
}
