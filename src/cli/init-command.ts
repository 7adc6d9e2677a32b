import { mkdir, mkdtemp, readdir, readFile, rm, stat, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { loadContract } from "../contract/load-contract.js";
import { ExitCode, UsageError } from "../errors.js";
import { errnoText, pathExists } from "../util/files.js";
import { VERSION } from "../version.js";
import { parseFlags } from "./arguments.js";
import type { CommandContext } from "./main.js";
import { operatorLayout } from "./operator-layout.js";
import {
  CONTROLLER_DIRS,
  isMainPackageSource,
  isManifestName,
  LAYOUT_DIRS,
  MAIN_FILES,
  type DirectoryRead,
  type FileRead,
  type PackageRead,
  type RepositoryRead,
} from "./repository-read.js";
import { starterContract } from "./starter-contract.js";
import { displayPath, toPosix } from "./user-paths.js";

export const initFlags = {
  dir: { type: "string" },
  crds: { type: "string" },
  sample: { type: "string" },
  output: { type: "string" },
  command: { type: "string" },
  schema: { type: "string" },
  verbose: { type: "boolean" },
  "no-build": { type: "boolean" },
} as const;

const SCHEMA_FILE = "reconcile-conformance.schema.json";

/**
 * `init`: writes a starter contract for the operator in --dir from what it
 * finds there (kubebuilder layout first): the CRDs, a sample of a kind they
 * serve, the command from main.go, how it confines itself to a namespace and
 * updates derived from the CRD's schema (two, of different fields, when it allows). Never overwrites a file; the
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

  const layout = operatorLayout(await readRepository(dir, values));
  const { crds, sample, others, main, command, namespaced, updates } = layout;
  const schemaRef = values.schema ?? (await schemaReference(outputDir));
  const firstBuild =
    command.goRun && main && values["no-build"] !== true
      ? await buildOnce(dir, main.target, context)
      : undefined;
  const text = starterContract({
    layout,
    dir,
    outputDir,
    schemaRef,
    ...(firstBuild === undefined ? {} : { firstBuildSeconds: firstBuild }),
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
    updates.length > 0
      ? `init: updates: ${updates.map((u) => `spec.${u.field} ${JSON.stringify(u.from)} -> ${JSON.stringify(u.to)}`).join("; ")} (${updates.length === 1 ? "an example; add a second, of another field, and" : "examples;"} pick changes that matter to the operator)`
      : "init: updates: none derived from the CRD's schema; add two",
  );
  logger.info(`init: wrote ${display(output)}`);
  const config =
    relative(process.cwd(), output) === "reconcile-conformance.yaml" ? "" : ` --config ${display(output)}`;
  logger.info(`next: review the file, then run: reconcile-conformance run${config}`);
  return ExitCode.ok;
}

/** How long `go build` of a cold module may take before init gives up on measuring it. */
const BUILD_TIMEOUT_MS = 30 * 60_000;

/**
 * Builds the operator once, as its first `go run` would, and returns how
 * long that took in seconds: the first `run` then starts from Go's build
 * cache, and the starter's startTimeout allows for a cold build elsewhere
 * (a CI machine). Undefined when the build failed (said, with its last
 * lines): the run would show the same error, with the operator's log.
 */
async function buildOnce(dir: string, target: string, context: CommandContext): Promise<number | undefined> {
  const { logger } = context;
  logger.info(
    `init: building the operator once (go build ${target}), so its first start needs no compile; a cold module can take minutes (--no-build skips this)`,
  );
  const started = Date.now();
  const output = join(await mkdtemp(join(tmpdir(), "rc-init-build-")), "operator");
  try {
    const result = await context.runner.run(["go", "build", "-o", output, target], {
      cwd: dir,
      signal: context.signal,
      timeoutMs: BUILD_TIMEOUT_MS,
      onStderrLine: (line) => logger.debug(`go build: ${line}`),
    });
    const seconds = Math.round((Date.now() - started) / 100) / 10;
    if (result.exitCode !== 0) {
      const tail = result.stderr.trim().split("\n").slice(-5).join("\n  ");
      logger.warn(`init: go build ${target} failed (exit ${result.exitCode}) after ${seconds} s:\n  ${tail}`);
      return undefined;
    }
    logger.info(`init: built in ${seconds} s`);
    return seconds;
  } catch (error) {
    logger.warn(`init: could not build the operator (go build ${target}): ${errnoText(error)}`);
    return undefined;
  } finally {
    await rm(dirname(output), { recursive: true, force: true });
  }
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

/** A path as the user sees it: relative to the working directory when under it. */
const display = (path: string) => displayPath(path, process.cwd());
const flowList = (words: readonly string[]) => `[${words.map((w) => JSON.stringify(w)).join(", ")}]`;

// ---------------------------------------------------------------- reading the repository

/**
 * What operatorLayout decides from: the layout directories that exist and
 * their manifests, each existing main.go candidate's package, and what the
 * flags point at. Every read that fails is kept as its error, for
 * operatorLayout to raise when (and only when) it gets to it.
 */
async function readRepository(
  dir: string,
  flags: { readonly crds?: string; readonly sample?: string; readonly command?: string },
): Promise<RepositoryRead> {
  const directories = new Map<string, DirectoryRead>();
  for (const candidate of LAYOUT_DIRS) {
    const path = join(dir, candidate);
    if (await isDirectory(path)) directories.set(candidate, await readManifests(path));
  }
  const mains = new Map<string, PackageRead>();
  for (const candidate of MAIN_FILES) {
    const file = join(dir, candidate);
    if (await pathExists(file)) mains.set(candidate, await readPackage(dirname(file)));
  }
  const controllers = new Map<string, PackageRead>();
  for (const candidate of CONTROLLER_DIRS) {
    const path = join(dir, candidate);
    if (await isDirectory(path)) controllers.set(candidate, await readPackage(path));
  }
  return {
    dir,
    cwd: process.cwd(),
    directories,
    mains,
    controllers,
    ...(flags.crds === undefined ? {} : { crds: await readCrdsFlag(flags.crds) }),
    ...(flags.sample === undefined
      ? {}
      : {
          sample: {
            flag: flags.sample,
            path: resolve(flags.sample),
            read: await readText(resolve(flags.sample)),
          },
        }),
    ...(flags.command === undefined ? {} : { command: flags.command }),
  };
}

/** --crds: a directory of manifests or one file, or why stat failed. */
async function readCrdsFlag(flag: string): Promise<NonNullable<RepositoryRead["crds"]>> {
  const path = resolve(flag);
  try {
    const info = await stat(path);
    return {
      flag,
      path,
      read: info.isDirectory() ? { directory: await readManifests(path) } : { file: await readText(path) },
    };
  } catch (error) {
    return { flag, path, read: { error } };
  }
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

/** The manifest files of a directory (isManifestName), read. */
async function readManifests(dir: string): Promise<DirectoryRead> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    const files = entries.filter((e) => e.isFile() && isManifestName(e.name)).map((e) => join(dir, e.name));
    return { files: await Promise.all(files.map(async (path) => ({ path, read: await readText(path) }))) };
  } catch (error) {
    return { error };
  }
}

/** The Go sources of a main package's directory (isMainPackageSource), read. */
async function readPackage(dir: string): Promise<PackageRead> {
  try {
    const names = (await readdir(dir)).filter(isMainPackageSource);
    return {
      files: await Promise.all(names.map(async (name) => ({ name, read: await readText(join(dir, name)) }))),
    };
  } catch (error) {
    return { error };
  }
}

async function readText(path: string): Promise<FileRead> {
  return readFile(path, "utf8").then(
    (text) => ({ text }),
    (error: unknown) => ({ error }),
  );
}

/**
 * The schema for the `# yaml-language-server` line: the package's copy in the
 * nearest node_modules above the contract (a project that installed the kit),
 * else this version's copy as the package was published, by URL: an `npx`
 * user has no node_modules to point at, and the file must work in every
 * clone of the operator's repository.
 */
async function schemaReference(outputDir: string): Promise<string> {
  for (let d = outputDir; ; d = dirname(d)) {
    const pkg = join(d, "node_modules", "reconcile-conformance");
    if (await pathExists(pkg)) return toPosix(relative(outputDir, join(pkg, "schema", SCHEMA_FILE)));
    if (dirname(d) === d) return publishedSchemaUrl(VERSION);
  }
}

/** The published package's schema file of `version`, served by a CDN of the npm registry's packages. */
export function publishedSchemaUrl(version: string): string {
  return `https://unpkg.com/reconcile-conformance@${version}/schema/${SCHEMA_FILE}`;
}
