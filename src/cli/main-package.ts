import { dirname, join } from "node:path";
import { commandWords } from "./command-words.js";
import { MAIN_FILES, type PackageRead, type RepositoryRead } from "./repository-read.js";
import { toPosix } from "./user-paths.js";

// The operator's main package, as init reads it: which one it is, the command that runs it, how it
// confines itself to a namespace, and the environment variables it and its controllers read. Pure.

/** What kubebuilder's `make build` writes; the command when no main.go is found and none is given. */
export const PLACEHOLDER_COMMAND = ["./bin/manager", "--leader-elect=false"] as const;

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
 * the given Go sources, each once, in order; also through a constant or a
 * variable (`os.Getenv(imageEnvVar)`, or `config.ImageEnvVar` from another
 * package) whose string is written in any of the sources. Names built at
 * run time are not seen. Pure.
 */
export function environmentReads(
  sources: readonly { readonly file: string; readonly text: string }[],
): EnvironmentRead[] {
  const named = stringConstants(sources);
  const found = new Map<string, EnvironmentRead>();
  for (const { file, text } of sources) {
    for (const match of text.matchAll(
      /\bos\.(Getenv|LookupEnv)\(\s*(?:"([A-Za-z_][A-Za-z0-9_]*)"|([A-Za-z_][\w.]*))\s*\)/g,
    )) {
      const [, how = "", literal, identifier] = match;
      const name = literal ?? named.get(identifier?.split(".").at(-1) ?? "");
      if (name === undefined || found.has(name) || KIT_SETS.has(name)) continue;
      found.set(name, { name, file, how: literal ? `os.${how}` : `os.${how}(${identifier ?? ""})` });
    }
  }
  return [...found.values()];
}

/**
 * Identifiers given a string that could name an environment variable
 * (`const imageEnvVar = "RELATED_IMAGE"`, in a const block, or with `:=`),
 * in every source: the first definition of a name wins. Pure.
 */
function stringConstants(sources: readonly { readonly text: string }[]): Map<string, string> {
  const named = new Map<string, string>();
  for (const { text } of sources) {
    for (const match of text.matchAll(
      /\b([A-Za-z_]\w*)\s*(?:string\s*)?(?::=|=)\s*"([A-Za-z_][A-Za-z0-9_]*)"/g,
    )) {
      const [, identifier = "", value = ""] = match;
      if (!named.has(identifier)) named.set(identifier, value);
    }
  }
  return named;
}

/** The Go sources of the main package and of the controller packages, each named relative to the project. */
export function goSources(
  read: Pick<RepositoryRead, "mains" | "controllers">,
): { file: string; text: string }[] {
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

// ---------------------------------------------------------------- the main package and its command

/** The first of MAIN_FILES that exists, with its package's text; a failed read is raised as it was. */
export function findMain(read: Pick<RepositoryRead, "dir" | "mains">): MainPackage | undefined {
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
export function defaultCommand(main: MainPackage | undefined): Command {
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
export function explicitCommand(text: string): Command {
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
export function detectNamespaced(main: MainPackage | undefined): Namespaced {
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
