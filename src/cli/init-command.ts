import { mkdir, readdir, readFile, stat, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { parseAllDocuments, stringify } from "yaml";
import { contractSchema, SELECTABLE_SUITES } from "../contract/contract-schema.js";
import { loadContract } from "../contract/load-contract.js";
import { ExitCode, UsageError } from "../errors.js";
import { pathExists } from "../util/files.js";
import { asRecord, isRecord } from "../util/records.js";
import { parseFlags } from "./arguments.js";
import type { CommandContext } from "./main.js";
import { errnoText } from "../util/files.js";

export const initFlags = {
  dir: { type: "string" },
  crds: { type: "string" },
  sample: { type: "string" },
  output: { type: "string" },
  command: { type: "string" },
  schema: { type: "string" },
  verbose: { type: "boolean" },
} as const;

/** Where the kubebuilder layout (first), operator-sdk's older one and plain projects keep things. */
const CRD_DIRS = ["config/crd/bases", "deploy/crds", "crds"];
const SAMPLE_DIRS = ["config/samples", "deploy/crds", "samples"];
const MAIN_FILES = ["cmd/main.go", "main.go", "cmd/manager/main.go"];
/** What kubebuilder's `make build` writes; the command when no main.go is found and none is given. */
const PLACEHOLDER_COMMAND = ["./bin/manager", "--leader-elect=false"];
const SCHEMA_FILE = "reconcile-conformance.schema.json";
/** Comments wrap here (the project's prettier width is 110; YAML comments stay a little shorter). */
const WIDTH = 100;

/** One kind a CRD defines, with its versions. */
interface CrdKind {
  readonly file: string;
  /** metadata.name: two files defining the same CRD cannot both be installed. */
  readonly name: string;
  readonly group: string;
  readonly kind: string;
  readonly versions: readonly { readonly name: string; readonly served: boolean; readonly schema: unknown }[];
}

interface SampleObject {
  readonly file: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly spec: unknown;
}

interface MainPackage {
  /** The main.go found, absolute. */
  readonly file: string;
  /** The same, relative to the project directory. */
  readonly name: string;
  /** The text of every non-test .go file in its directory (the whole main package). */
  readonly text: string;
  /** What `go run` is given: the file when it is the package's only file, else its directory. */
  readonly target: string;
}

interface Command {
  readonly words: readonly string[];
  /** Where the words come from, for the log. */
  readonly origin: string;
  /** Whether it builds with `go run` (slow on the first start). */
  readonly goRun: boolean;
  /** Why these words, for the comment above them. */
  readonly notes: string;
}

type Namespaced =
  | { readonly arg: string; readonly why: string }
  | { readonly env: string; readonly why: string }
  | { readonly none: string };

interface ProposedUpdate {
  readonly field: string;
  readonly from: string | number;
  readonly to: string | number;
}

/**
 * `init`: writes a starter contract for the operator in --dir from what it
 * finds there (kubebuilder layout first): the CRDs, a sample of a kind they
 * serve, the command from main.go, how it confines itself to a namespace and
 * one update derived from the CRD's schema. Never overwrites a file; the
 * written contract is loaded once to prove it is valid.
 */
export async function initCommand(args: string[], context: CommandContext): Promise<ExitCode> {
  const { values, positionals } = parseFlags(args, initFlags, "init");
  if (positionals.length > 0) {
    throw new UsageError("cli/unexpected-argument", `init: unexpected argument "${positionals[0]}"`);
  }
  const { logger } = context;
  const dir = resolve(values.dir ?? ".");
  await requireDirectory(dir, `--dir ${values.dir ?? "."}`);
  const output = resolve(values.output ?? join(dir, "reconcile-conformance.yaml"));
  if (await pathExists(output)) throw outputExists(output);
  const outputDir = dirname(output);

  const crds = await findCrds(dir, values.crds);
  const { sample, others } = await findSample(dir, values.sample, crds.kinds);
  const served = servingKind(sample, crds.kinds);
  const main = await findMain(dir);
  const command = values.command === undefined ? defaultCommand(main) : explicitCommand(values.command);
  const namespaced = detectNamespaced(main);
  const schema = versionSchema(served, sample);
  const update = proposeUpdate(sample.spec, schema);
  const readiness = chooseReadiness(schema);
  const schemaRef = values.schema ?? (await schemaReference(outputDir));

  const text = renderContract({
    dir,
    outputDir,
    schemaRef,
    command,
    main,
    namespaced,
    crdFiles: crds.files,
    crdOrigin: crds.origin,
    skippedCrds: crds.skipped,
    sample,
    others,
    update,
    readiness,
  });
  await mkdir(outputDir, { recursive: true });
  await writeFile(output, text, { flag: "wx" }).catch((error: unknown) => {
    throw errnoText(error) === "EEXIST"
      ? outputExists(output)
      : new UsageError("init/unwritable", `init: cannot write ${output}: ${errnoText(error)}`);
  });
  // What init writes must load; a file that does not is removed rather than left half-right.
  try {
    await loadContract(output);
  } catch (error) {
    await unlink(output).catch(() => {});
    const message = error instanceof Error ? error.message : String(error);
    throw new UsageError(
      "init/invalid-result",
      `init: the contract it wrote did not load (removed): ${message}`,
    );
  }

  logger.info(`init: CRDs (${crds.origin}): ${crds.files.map(display).join(", ")}`);
  for (const s of crds.skipped) {
    logger.warn(`init: left out ${display(s.file)}: it defines the same CRD as ${display(s.sameAs)}`);
  }
  logger.info(
    `init: sample: ${display(sample.file)} (${sample.kind} ${sample.name}, ${sample.apiVersion})` +
      (others.length > 0 ? `; also there: ${others.map((o) => basename(o.file)).join(", ")}` : ""),
  );
  logger.info(`init: operator command: ${flowList(command.words)} (${command.origin})`);
  if (values.command === undefined && main === undefined) {
    logger.warn(
      `init: no main.go found (looked for ${MAIN_FILES.join(", ")} in ${dir}); operator.command is a placeholder: set it, or give --command`,
    );
  }
  logger.info(
    "none" in namespaced
      ? `init: operator.namespaced: not set (${namespaced.none}); scenarios will run one at a time`
      : `init: operator.namespaced: ${"arg" in namespaced ? namespaced.arg : `$${namespaced.env}`} (${namespaced.why})`,
  );
  logger.info(
    update
      ? `init: updates: spec.${update.field} ${JSON.stringify(update.from)} -> ${JSON.stringify(update.to)} (an example; pick changes that matter to the operator)`
      : "init: updates: none derived from the CRD's schema; add some",
  );
  logger.info(`init: wrote ${display(output)}`);
  const config =
    relative(process.cwd(), output) === "reconcile-conformance.yaml" ? "" : ` --config ${display(output)}`;
  logger.info(`next: review the file, then run: reconcile-conformance run${config}`);
  return ExitCode.ok;
}

function outputExists(output: string): UsageError {
  return new UsageError(
    "init/output-exists",
    `init: ${output} already exists and is not overwritten; remove it or give another path with --output F`,
  );
}

async function requireDirectory(path: string, what: string): Promise<void> {
  const info = await stat(path).catch((error: unknown) => {
    throw new UsageError("init/no-directory", `init: ${what}: cannot read ${path}: ${errnoText(error)}`);
  });
  if (!info.isDirectory())
    throw new UsageError("init/no-directory", `init: ${what}: ${path} is not a directory`);
}

// ---------------------------------------------------------------- detection

/** The CRD manifests: every .yaml under --crds (a directory or one file), else the first layout directory that has any. */
async function findCrds(
  dir: string,
  flag: string | undefined,
): Promise<{ files: string[]; kinds: CrdKind[]; skipped: SkippedCrd[]; origin: string }> {
  if (flag !== undefined) {
    const path = resolve(flag);
    const info = await stat(path).catch((error: unknown) => {
      throw new UsageError("init/no-crds", `init: --crds ${flag}: cannot read ${path}: ${errnoText(error)}`);
    });
    const found = await crdsIn(info.isDirectory() ? await yamlFiles(path) : [path]);
    if (found.files.length === 0) {
      throw new UsageError(
        "init/no-crds",
        `init: --crds ${flag}: no CustomResourceDefinition in ${info.isDirectory() ? `any .yaml file in ${path}` : path}`,
      );
    }
    return { ...found, origin: "--crds" };
  }
  for (const candidate of CRD_DIRS) {
    const path = join(dir, candidate);
    if (!(await isDirectory(path))) continue;
    const found = await crdsIn(await yamlFiles(path));
    if (found.files.length > 0) return { ...found, origin: `found in ${candidate}` };
  }
  throw new UsageError(
    "init/no-crds",
    `init: no CustomResourceDefinition found in ${dir}: looked in ${CRD_DIRS.join(", ")} (kubebuilder writes them to config/crd/bases with \`make manifests\`); give the directory that holds them with --crds DIR`,
  );
}

/** A file left out because the CRDs it defines are defined by an earlier file (variants of one CRD). */
interface SkippedCrd {
  readonly file: string;
  readonly sameAs: string;
}

async function crdsIn(
  files: string[],
): Promise<{ files: string[]; kinds: CrdKind[]; skipped: SkippedCrd[] }> {
  const kinds: CrdKind[] = [];
  const holding: string[] = [];
  const skipped: SkippedCrd[] = [];
  for (const file of files) {
    const found = (await readYaml(file))
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

/** --sample, else the first sample in the layout whose kind the CRDs serve (and the others found beside it). */
async function findSample(
  dir: string,
  flag: string | undefined,
  kinds: readonly CrdKind[],
): Promise<{ sample: SampleObject; others: SampleObject[] }> {
  if (flag !== undefined) {
    const file = resolve(flag);
    const objects = await readYaml(file, `--sample ${flag}`);
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
    const path = join(dir, candidate);
    if (!(await isDirectory(path))) continue;
    const samples: SampleObject[] = [];
    for (const file of await yamlFiles(path)) {
      const objects = await readYaml(file);
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
    `init: no sample of a kind the CRDs serve (${servedList(kinds)}) in ${dir}: looked in ${SAMPLE_DIRS.join(", ")}` +
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

async function findMain(dir: string): Promise<MainPackage | undefined> {
  for (const candidate of MAIN_FILES) {
    const file = join(dir, candidate);
    if (!(await pathExists(file))) continue;
    const packageDir = dirname(file);
    const goFiles = (await readdir(packageDir))
      .filter((name) => name.endsWith(".go") && !name.endsWith("_test.go"))
      .sort();
    const texts = await Promise.all(goFiles.map((name) => readFile(join(packageDir, name), "utf8")));
    const relativeDir = toPosix(dirname(candidate));
    const target =
      goFiles.length === 1 ? `./${toPosix(candidate)}` : relativeDir === "." ? "." : `./${relativeDir}`;
    return { file, name: toPosix(candidate), text: texts.join("\n"), target };
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

/** --command: a JSON list of words, or a command line split as a shell would (quotes, backslashes). */
function explicitCommand(text: string): Command {
  const bad = (why: string) =>
    new UsageError("init/bad-command", `init: --command ${JSON.stringify(text)}: ${why}`);
  let words: string[];
  if (text.trimStart().startsWith("[")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw bad('expected a JSON list of words, e.g. ["./bin/manager", "--leader-elect=false"]');
    }
    if (!Array.isArray(parsed) || !parsed.every((w) => typeof w === "string")) {
      throw bad('expected a JSON list of words, e.g. ["./bin/manager", "--leader-elect=false"]');
    }
    words = parsed.filter((w): w is string => typeof w === "string");
  } else {
    words = splitWords(text, bad);
  }
  if (words.length === 0)
    throw bad('expected at least the program, e.g. "./bin/manager --leader-elect=false"');
  return {
    words,
    origin: "given with --command",
    goRun: words.includes("go") && words.includes("run"),
    notes: "Given with --command.",
  };
}

function splitWords(text: string, bad: (why: string) => Error): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "\\" && (text[i + 1] === '"' || text[i + 1] === "\\")) word += text.charAt(++i);
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= "";
    } else if (c === "\\" && i + 1 < text.length) {
      word = (word ?? "") + text.charAt(++i);
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? "") + c;
    }
  }
  if (quote) throw bad(`unclosed ${quote}`);
  if (word !== undefined) words.push(word);
  return words;
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

function versionSchema(kind: CrdKind | undefined, sample: SampleObject): Record<string, unknown> {
  const [, version] = splitApiVersion(sample.apiVersion);
  return asRecord(kind?.versions.find((v) => v.name === version)?.schema);
}

/**
 * One change of one top-level spec field the sample sets and the CRD's
 * schema types simply: an integer + 1 (within its bounds), else a string
 * (another enum value, or the value with "-updated"). Fields with a pattern,
 * a format or CEL validations are left alone: the kit cannot tell what they accept.
 */
function proposeUpdate(spec: unknown, schema: Record<string, unknown>): ProposedUpdate | undefined {
  if (!isRecord(spec)) return undefined;
  const properties = asRecord(asRecord(asRecord(schema.properties).spec).properties);
  const fields = Object.entries(spec).flatMap(([field, value]) => {
    const property = properties[field];
    return isRecord(property) && property["x-kubernetes-validations"] === undefined
      ? [{ field, value, property }]
      : [];
  });
  for (const { field, value, property } of fields) {
    if (property.type !== "integer" || typeof value !== "number" || !Number.isInteger(value)) continue;
    if (property.multipleOf !== undefined || property.enum !== undefined) continue;
    const fits = (n: number) => withinBounds(n, property);
    if (fits(value + 1)) return { field, from: value, to: value + 1 };
    if (fits(value - 1)) return { field, from: value, to: value - 1 };
  }
  for (const { field, value, property } of fields) {
    if (property.type !== "string" || typeof value !== "string") continue;
    if (Array.isArray(property.enum)) {
      const other = property.enum.find((e): e is string => typeof e === "string" && e !== value);
      if (other !== undefined) return { field, from: value, to: other };
      continue;
    }
    if (property.pattern !== undefined || property.format !== undefined) continue;
    const to = `${value}-updated`;
    if (typeof property.maxLength === "number" && to.length > property.maxLength) continue;
    return { field, from: value, to };
  }
  return undefined;
}

function withinBounds(n: number, property: Record<string, unknown>): boolean {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = property;
  if (typeof minimum === "number" && (exclusiveMinimum === true ? n <= minimum : n < minimum)) return false;
  if (typeof maximum === "number" && (exclusiveMaximum === true ? n >= maximum : n > maximum)) return false;
  return true;
}

/** "quiet" when the CRD's schema shows a status without conditions (or no status); else "conditions". */
function chooseReadiness(schema: Record<string, unknown>): "conditions" | "quiet" {
  const properties = schema.properties;
  if (!isRecord(properties)) return "conditions";
  const status = properties.status;
  if (status === undefined) return "quiet";
  const statusProperties = asRecord(status).properties;
  return isRecord(statusProperties) && statusProperties.conditions === undefined ? "quiet" : "conditions";
}

/**
 * The schema for the `# yaml-language-server` line: the package's copy in the
 * nearest node_modules above the contract, else where a local install would put it.
 */
async function schemaReference(outputDir: string): Promise<string> {
  for (let d = outputDir; ; d = dirname(d)) {
    const pkg = join(d, "node_modules", "reconcile-conformance");
    if (await pathExists(pkg)) return toPosix(relative(outputDir, join(pkg, "schema", SCHEMA_FILE)));
    if (dirname(d) === d) return `node_modules/reconcile-conformance/schema/${SCHEMA_FILE}`;
  }
}

// ---------------------------------------------------------------- files

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

/** The .yaml/.yml files of a directory (not kustomization.yaml), sorted. */
async function yamlFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter(
      (e) =>
        e.isFile() && [".yaml", ".yml"].includes(extname(e.name)) && !/^kustomization\.ya?ml$/.test(e.name),
    )
    .map((e) => join(dir, e.name))
    .sort();
}

/** The objects of a (multi-document) YAML file; errors name the file and the line. */
async function readYaml(file: string, what = display(file)): Promise<Record<string, unknown>[]> {
  const text = await readFile(file, "utf8").catch((error: unknown) => {
    throw new UsageError("init/unreadable", `init: ${what}: cannot read ${file}: ${errnoText(error)}`);
  });
  const objects: Record<string, unknown>[] = [];
  for (const document of parseAllDocuments(text)) {
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

function toPosix(path: string): string {
  return sep === "/" ? path : path.split(sep).join("/");
}

/** A path as the user sees it: relative to the working directory when under it. */
function display(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === "" ? "." : rel.startsWith("..") || isAbsolute(rel) ? path : toPosix(rel);
}

// ---------------------------------------------------------------- rendering

interface Rendering {
  readonly dir: string;
  readonly outputDir: string;
  readonly schemaRef: string;
  readonly command: Command;
  readonly main: MainPackage | undefined;
  readonly namespaced: Namespaced;
  readonly crdFiles: readonly string[];
  readonly crdOrigin: string;
  readonly skippedCrds: readonly SkippedCrd[];
  readonly sample: SampleObject;
  readonly others: readonly SampleObject[];
  readonly update: ProposedUpdate | undefined;
  readonly readiness: "conditions" | "quiet";
}

/** "# " lines of at most WIDTH characters. */
function comment(text: string, indent = ""): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== "" && indent.length + 2 + line.length + 1 + word.length > WIDTH) {
      lines.push(`${indent}# ${line}`);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  if (line !== "") lines.push(`${indent}# ${line}`);
  return lines;
}

const flowList = (words: readonly string[]) => `[${words.map((w) => JSON.stringify(w)).join(", ")}]`;
const flow = (value: unknown) =>
  stringify(value, { collectionStyle: "flow", flowCollectionPadding: false, lineWidth: 0 }).trimEnd();
const indented = (text: string, indent: string) =>
  text
    .trimEnd()
    .split("\n")
    .map((l) => `${indent}${l}`);

function renderContract(r: Rendering): string {
  // The defaults, from the schema itself, so the starter shows what a field left alone means.
  const defaults = contractSchema.parse({ operator: { command: ["x"] }, crds: ["x"], sample: "x" });
  const at = (path: string) => toPosix(relative(r.outputDir, path)) || ".";
  const lines: string[] = [`# yaml-language-server: $schema=${r.schemaRef}`];
  lines.push(
    ...comment(
      `reconcile-conformance contract of ${basename(r.dir)}, written by \`reconcile-conformance init\`: how to start the operator and which custom resource to test it with. What init guessed is a start; read each comment and adjust. Paths are relative to this file. A field shown commented out keeps the default written beside it.`,
    ),
  );

  lines.push("operator:");
  lines.push(
    ...comment(
      `The operator's command line, as a list of words. The kit starts it once per scenario with KUBECONFIG pointing at the kit's proxy in front of the test cluster; the operator must use that kubeconfig (controller-runtime does). ${r.command.notes}`,
      "  ",
    ),
    `  command: ${flowList(r.command.words)}`,
    ...comment(
      "Or, on a kind cluster (run --cluster kind), the operator deployed from its image and manifests instead of command: the kit loads the image into kind, applies the manifests, and copies the operator's Deployment into each scenario's namespace, reading a kubeconfig that points at the kit's proxy. Build the image first (docker build -t IMAGE .).",
      "  ",
    ),
    "  # deploy:",
    '  #   image: "example.com/operator:ci"',
    '  #   manifests: "config/default" # a kustomize directory (kubebuilder layout), or YAML files',
    "  #   deployment: { name: controller-manager, namespace: system } # default: the only Deployment",
    '  #   container: manager # default: the only container, or the one named "manager"',
    "  #   loadImage: true # kind load docker-image first; false when the nodes can pull it",
  );

  const workDir = at(r.dir);
  lines.push(...comment("The directory the command runs in (default: this file's directory).", "  "));
  lines.push(workDir === "." ? "  # workingDir: ." : `  workingDir: ${JSON.stringify(workDir)}`);
  lines.push(
    ...comment('Environment variables added to the operator\'s, e.g. { LOG_LEVEL: "debug" }.', "  "),
    `  env: ${flow(defaults.operator.env)}`,
    ...comment(
      "The kit withholds ACTIONS_*, INPUT_* and GITHUB_TOKEN from the operator (they matter in GitHub Actions); name here any of them it needs anyway.",
      "  ",
    ),
    `  passThroughEnv: ${flow(defaults.operator.passThroughEnv)}`,
  );
  const startTimeout = r.command.goRun ? "180s" : defaults.operator.startTimeout;
  lines.push(
    ...comment(
      `How long the operator may take from its start until it lists or watches its custom resource (default ${defaults.operator.startTimeout})` +
        (r.command.goRun ? "; longer here because the first `go run` compiles the operator." : "."),
      "  ",
    ),
    `  startTimeout: ${startTimeout}`,
  );
  const namespacedHelp =
    "How to confine the operator to one namespace. With it, each scenario's operator process gets its scenario's namespace, and scenarios run side by side (run --parallel). Without it, the operator is taken to watch the whole cluster and scenarios run one at a time. Give exactly one of arg (a flag; the kit appends <flag>=<namespace>) or env (a variable the kit sets to the namespace).";
  if ("none" in r.namespaced) {
    lines.push(
      ...comment(
        `${namespacedHelp} Not set: ${r.namespaced.none}. If it can watch a single namespace, uncomment one:`,
        "  ",
      ),
      "  # namespaced:",
      "  #   arg: --watch-namespace",
      "  #   env: WATCH_NAMESPACE",
    );
  } else {
    lines.push(
      ...comment(
        `${namespacedHelp} Set because ${r.namespaced.why}; check that it really limits what the operator watches.`,
        "  ",
      ),
      "  namespaced:",
      "arg" in r.namespaced ? `    arg: ${r.namespaced.arg}` : `    env: ${r.namespaced.env}`,
    );
  }

  const crdDirs = [...new Set(r.crdFiles.map((f) => at(dirname(f))))];
  const crdSource =
    r.crdOrigin === "--crds"
      ? "given with --crds"
      : `every file with a CustomResourceDefinition in ${crdDirs.join(", ")}`;
  lines.push(
    ...comment(
      `CRD manifests the kit installs before the operator starts (${crdSource}).` +
        (r.crdOrigin.includes("config/crd/bases")
          ? " Regenerate them (make manifests) when the API changes."
          : ""),
    ),
  );
  if (r.skippedCrds.length > 0) {
    lines.push(
      ...comment(
        `Left out, as they define the same CRDs as a file listed (use one or the other): ${r.skippedCrds.map((s) => at(s.file)).join(", ")}.`,
      ),
    );
  }
  lines.push("crds:", ...r.crdFiles.map((f) => `  - ${JSON.stringify(at(f))}`));

  lines.push(
    ...comment(
      `The custom resource every scenario creates, each in a namespace of its own: ${r.sample.kind} ${r.sample.name}.`,
    ),
  );
  if (r.others.length > 0) {
    lines.push(
      ...comment(
        `Other samples beside it (this one is the first whose kind the CRDs serve): ${r.others.map((o) => `${at(o.file)} (${o.kind})`).join(", ")}.`,
      ),
    );
  }
  lines.push(`sample: ${JSON.stringify(at(r.sample.file))}`);

  const updatesHelp =
    "Spec changes the kit applies one after another to the sample, each a merge patch; the operator must converge after each.";
  if (r.update) {
    lines.push(
      ...comment(
        `${updatesHelp} This one was derived from the CRD's schema (spec.${r.update.field}: ${JSON.stringify(r.update.from)} -> ${JSON.stringify(r.update.to)}) only as an example: pick meaningful ones, changes that alter what the operator creates.`,
      ),
      "updates:",
      ...indented(stringify([{ spec: { [r.update.field]: r.update.to } }]), "  "),
    );
  } else {
    lines.push(
      ...comment(
        `${updatesHelp} None could be derived from the CRD's schema (no integer or plain string field in the sample's spec); add some, e.g. - spec: { replicas: 2 }.`,
      ),
      "updates: []",
    );
  }

  lines.push(
    ...comment(
      'When the custom resource counts as ready. "conditions": a Ready or Available condition is True and its observedGeneration (on the condition or in status) equals metadata.generation. "quiet": no test on the resource; ready once the operator stops writing and its children exist.' +
        (r.readiness === "quiet"
          ? ` "quiet" here because the CRD's schema shows no status.conditions (default ${JSON.stringify(defaults.readiness)}).`
          : "") +
        " Or a CEL expression over the resource as self, e.g.:",
    ),
    '#   readiness: { cel: "self.status.availableReplicas == self.spec.replicas" }',
    `readiness: ${r.readiness}`,
    ...comment(
      `How long the operator must make no write for a scenario to count as converged (default ${defaults.quietPeriod}).`,
    ),
    `quietPeriod: ${defaults.quietPeriod}`,
    ...comment(
      "Per-step timeouts: how long a scenario may take to converge, and an installed CRD to be served.",
    ),
    "timeouts:",
    `  converge: ${defaults.timeouts.converge}`,
    `  crdEstablished: ${defaults.timeouts.crdEstablished}`,
    ...comment(
      "Writes the checks leave out, by API group and plural resource (these are the defaults: Events and Leases). Add resources the operator writes as a side line, keeping these.",
    ),
    "ignoreWrites:",
    ...defaults.ignoreWrites.map(
      (w) => `  - { group: ${JSON.stringify(w.group)}, resource: ${JSON.stringify(w.resource)} }`,
    ),
    ...comment(
      'Which managed fields of the operator\'s children the drift suite changes behind its back: include adds targets (e.g. "Service/spec.sessionAffinity"), exclude drops default ones (e.g. "Deployment/spec.replicas" when an autoscaler owns it).',
    ),
    "drift:",
    `  include: ${flow(defaults.drift.include)}`,
    `  exclude: ${flow(defaults.drift.exclude)}`,
    ...comment(
      "Suites to run (default: all, including any a later version adds). To run only some, uncomment and trim:",
    ),
    `# suites: ${flow([...SELECTABLE_SUITES])}`,
    ...comment(
      "What the operator keeps stable, per object (the custom resource's kind, a child's kind, optionally a name pattern): by default every object keeps its resourceVersion (no write without a cause), uid (never recreated) and generation. Withdraw one with a reason, and name fields the operator rewrites on purpose (volatile), e.g.:",
    ),
    `#   - kind: ${r.sample.kind}`,
    "#     volatile:",
    "#       - { path: status.lastHeartbeatTime, reason: the operator stamps a heartbeat every minute }",
    "#   - kind: ConfigMap",
    '#     name: "session-*"',
    "#     keeps: [resourceVersion, generation]",
    "#     reason: rotated by recreating it every hour",
    "promises: []",
    ...comment(
      "Known failures accepted for now: each waives a check's failures (or only the scenarios whose target matches), with a reason and optionally a last day; it shows as waived and does not fail the run. One that matches no failure is reported as stale; one past its date fails the run. E.g.:",
    ),
    '#   - { check: status-stability/no-redundant-writes, reason: "fixed by #123", until: "2027-01-31" }',
    "waivers: []",
  );
  return `${lines.join("\n")}\n`;
}
