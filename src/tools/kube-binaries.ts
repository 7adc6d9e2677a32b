/*
 * Where the kwok cluster's binaries come from, for the CLI and the Action
 * alike: the ones already in the bin directory, the pinned official
 * releases downloaded and verified (release-binaries.ts), or a build from
 * the Go modules that pin the same releases (hack/kube-binaries/build.sh).
 * `auto` downloads and builds only when the download cannot reach its
 * servers; a download that reaches them and fails (a wrong checksum, a
 * missing file) is an error, never a reason to build instead.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { KWOK_BINARIES } from "../cluster/kwok-provider.js";
import { describeError, InfrastructureError, UsageError } from "../errors.js";
import { findExecutable, tailLines, type CommandRunner } from "../process/command-runner.js";
import { pathExists } from "../util/files.js";
import type { Logger } from "../util/logger.js";
import { currentReleasePlatform, releaseFiles, type ReleasePlatform } from "./download-plan.js";
import { downloadKubeBinaries } from "./release-binaries.js";
import { unreachableReason } from "./release-download.js";
import { ReleaseErrorCode } from "./release-error-codes.js";
import { PINNED_RELEASES, type ReleaseBaseUrls } from "./release-pins.js";
import { readReleaseStamp, type ReleaseStamp } from "./release-stamp.js";

/** `auto`: what is there, else a download, else (downloads unreachable) a build. */
export const BINARIES_MODES = ["auto", "download", "build"] as const;
export type BinariesMode = (typeof BINARIES_MODES)[number];

/** The environment variable that sets the mode when no flag or input does. */
export const BINARIES_MODE_VARIABLE = "RECONCILE_CONFORMANCE_BINARIES";

/**
 * Mirrors of the release sites, each keeping the paths below it (see
 * ReleaseBaseUrls): for networks that reach the internet through one.
 */
export const RELEASE_MIRROR_VARIABLES: Readonly<Record<keyof ReleaseBaseUrls, string>> = {
  kubernetes: "RECONCILE_CONFORMANCE_KUBE_RELEASES",
  githubReleases: "RECONCILE_CONFORMANCE_GITHUB_RELEASES",
  githubApi: "RECONCILE_CONFORMANCE_GITHUB_API",
};

type Env = Readonly<Record<string, string | undefined>>;

/** The mode a flag (or input) names, else the environment's, else auto; `origin` names the flag in errors. */
export function binariesMode(value: string | undefined, env: Env, origin: string): BinariesMode {
  const [given, from] =
    value !== undefined && value !== ""
      ? [value, origin]
      : [env[BINARIES_MODE_VARIABLE], BINARIES_MODE_VARIABLE];
  if (given === undefined || given === "") return "auto";
  const mode = BINARIES_MODES.find((candidate) => candidate === given);
  if (!mode) {
    throw new UsageError(
      "cli/invalid-binaries",
      `${from}: "${given}" is not a way to get the binaries: use ${BINARIES_MODES.join(", ")}`,
    );
  }
  return mode;
}

/** The mirrors the environment names; the rest stay the publishers' own sites. */
export function releaseMirrors(env: Env): Partial<ReleaseBaseUrls> {
  const mirrors: { -readonly [K in keyof ReleaseBaseUrls]?: string } = {};
  for (const [key, variable] of Object.entries(RELEASE_MIRROR_VARIABLES)) {
    const value = env[variable];
    if (value) mirrors[key as keyof ReleaseBaseUrls] = value;
  }
  return mirrors;
}

/** What a bin directory holds. */
export interface BinDirState {
  readonly missing: readonly string[];
  /** Who put the binaries there: a download (its stamp), the Go build (its stamp), or neither that the kit knows of. */
  readonly origin: "download" | "build" | "unknown";
  readonly releaseStamp?: ReleaseStamp;
}

export async function inspectBinDir(binDir: string): Promise<BinDirState> {
  const missing: string[] = [];
  for (const name of KWOK_BINARIES) {
    if (!(await findExecutable(join(binDir, name)))) missing.push(name);
  }
  const releaseStamp = await readReleaseStamp(binDir);
  if (releaseStamp) return { missing, origin: "download", releaseStamp };
  return { missing, origin: (await pathExists(join(binDir, ".build-stamp"))) ? "build" : "unknown" };
}

/** The build script beside the kit (a clone, or the npm package, which ships hack/kube-binaries). */
export function findBuildScript(from: string = dirname(fileURLToPath(import.meta.url))): string | undefined {
  // src/tools/ in a clone, dist/ in a bundle: the script is a few levels up either way.
  let directory = from;
  for (let level = 0; level < 4; level += 1) {
    const candidate = join(directory, "hack", "kube-binaries", "build.sh");
    if (existsSync(candidate)) return candidate;
    directory = dirname(directory);
  }
  return undefined;
}

/** What ensureKubeBinaries will do, and why; `doctor` prints it. */
export interface BinariesPlan {
  readonly action: "use" | "download" | "build";
  readonly why: string;
  /** When it will download: whether an unreachable download builds instead (auto, with Go and the script). */
  readonly fallback?: "build";
  /** What stops the plan from working, when something does (no Go for a build). */
  readonly problem?: string;
}

/** The facts a plan depends on besides the bin directory. */
export interface PlanFacts {
  /** `go` on PATH, or undefined. */
  readonly go: string | undefined;
  readonly buildScript: string | undefined;
  /** This machine's platform in the releases' names, or why there is no release for it. */
  readonly platform: ReleasePlatform | { readonly unsupported: string };
}

/** Decides what to do from what the bin directory holds; pure but for what `state` and `facts` say. */
export function planKubeBinaries(
  binDir: string,
  mode: BinariesMode,
  state: BinDirState,
  facts: PlanFacts,
): BinariesPlan {
  const complete = state.missing.length === 0;
  const missingText = `${state.missing.join(", ")} not in ${binDir}`;
  const buildProblem = buildProblemOf(facts);
  const build = (why: string): BinariesPlan => ({
    action: "build",
    why,
    ...(buildProblem ? { problem: buildProblem } : {}),
  });
  const download = (why: string): BinariesPlan => {
    if ("unsupported" in facts.platform) {
      return { action: "download", why, problem: facts.platform.unsupported };
    }
    return { action: "download", why, ...(mode === "auto" && !buildProblem ? { fallback: "build" } : {}) };
  };

  switch (mode) {
    case "build":
      // The script itself decides whether what is there is current (its stamp) and does nothing if so.
      return build(
        complete && state.origin === "build"
          ? `--binaries build: the Go build in ${binDir}, rebuilt only if its stamp is stale`
          : `--binaries build: ${complete ? `the binaries in ${binDir} were not built from Go modules` : missingText}`,
      );
    case "download": {
      if (complete && state.releaseStamp && stampIsCurrent(state.releaseStamp, facts.platform)) {
        return {
          action: "use",
          why: `downloaded releases in ${binDir} (${describeStamp(state.releaseStamp)})`,
        };
      }
      return download(
        `--binaries download: ${
          !complete
            ? missingText
            : state.releaseStamp
              ? `the download in ${binDir} is of other releases (${describeStamp(state.releaseStamp)})`
              : `the binaries in ${binDir} were not downloaded`
        }`,
      );
    }
    case "auto": {
      if (complete) return { action: "use", why: `${describeOrigin(state)} in ${binDir}` };
      if ("unsupported" in facts.platform) {
        return build(`${missingText}, and ${facts.platform.unsupported}`);
      }
      return download(missingText);
    }
  }
}

function stampIsCurrent(stamp: ReleaseStamp, platform: PlanFacts["platform"]): boolean {
  if ("unsupported" in platform) return false;
  return (
    stamp.platform === `${platform.os}/${platform.arch}` &&
    stamp.versions.kubeVersion === PINNED_RELEASES.kubeVersion &&
    stamp.versions.etcdVersion === PINNED_RELEASES.etcdVersion &&
    stamp.versions.kwokVersion === PINNED_RELEASES.kwokVersion
  );
}

function describeStamp(stamp: ReleaseStamp): string {
  const { kubeVersion, etcdVersion, kwokVersion } = stamp.versions;
  return `Kubernetes ${kubeVersion}, etcd ${etcdVersion}, kwok ${kwokVersion} for ${stamp.platform}`;
}

function describeOrigin(state: BinDirState): string {
  switch (state.origin) {
    case "download":
      return `downloaded releases${state.releaseStamp ? ` (${describeStamp(state.releaseStamp)})` : ""}`;
    case "build":
      return "built from Go modules";
    case "unknown":
      return "binaries put there by hand";
  }
}

/** The plan's facts on this machine. */
export async function machineFacts(env: Env): Promise<PlanFacts> {
  let platform: PlanFacts["platform"];
  try {
    platform = currentReleasePlatform();
  } catch (error) {
    platform = { unsupported: `no release binaries are published for ${process.platform}/${process.arch}` };
    if (!(error instanceof InfrastructureError)) throw error;
  }
  return { go: await findExecutable("go", env.PATH ?? ""), buildScript: findBuildScript(), platform };
}

export interface EnsureKubeBinariesDeps {
  readonly logger: Logger;
  readonly runner: CommandRunner;
  readonly signal: AbortSignal;
  /** Also where GITHUB_TOKEN, when set, comes from: it raises the GitHub API's limit. */
  readonly env: Env;
  /** Defaults to this machine's; a test passes its own to pin the build script. */
  readonly facts?: PlanFacts;
}

/** What ensureKubeBinaries did. */
export interface EnsuredBinaries {
  readonly binDir: string;
  readonly source: "present" | "downloaded" | "built";
  /** Set when auto built because the download could not reach its servers: why. */
  readonly unreachable?: string;
}

/**
 * Makes sure `binDir` holds the kwok cluster's binaries, the way `mode`
 * says, with progress on the logger. Errors name what failed and how to get
 * around it (another mode, Go, a mirror).
 */
export async function ensureKubeBinaries(
  binDir: string,
  mode: BinariesMode,
  deps: EnsureKubeBinariesDeps,
): Promise<EnsuredBinaries> {
  const facts = deps.facts ?? (await machineFacts(deps.env));
  const plan = planKubeBinaries(binDir, mode, await inspectBinDir(binDir), facts);
  switch (plan.action) {
    case "use":
      deps.logger.info(`kube binaries: ${plan.why}`);
      return { binDir, source: "present" };
    case "build":
      deps.logger.info(`kube binaries: building from Go modules (${plan.why})`);
      await buildKubeBinaries(binDir, plan, facts, deps);
      return { binDir, source: "built" };
    case "download":
      break;
  }
  if (plan.problem) {
    throw new InfrastructureError(
      ReleaseErrorCode.unsupportedPlatform,
      `kube binaries: cannot download them (${plan.why}): ${plan.problem}; build them with --binaries build (needs Go)`,
    );
  }
  try {
    await downloadKubeBinaries(binDir, {
      logger: deps.logger,
      signal: deps.signal,
      baseUrls: releaseMirrors(deps.env),
      ...(deps.env.GITHUB_TOKEN ? { githubToken: deps.env.GITHUB_TOKEN } : {}),
    });
    return { binDir, source: "downloaded" };
  } catch (error) {
    if (!(error instanceof InfrastructureError && error.code === ReleaseErrorCode.unreachable)) throw error;
    const reason = error.message;
    if (plan.fallback !== "build") {
      const why =
        mode === "download"
          ? "--binaries download does not fall back to the build"
          : (buildProblemOf(facts) ?? "the build is not available");
      throw new InfrastructureError(
        "tools/kube-binaries-unreachable",
        `${reason}; ${why}. Build them from Go modules (--binaries build, or hack/kube-binaries/build.sh into ${binDir}), ` +
          `or name a mirror (${Object.values(RELEASE_MIRROR_VARIABLES).join(", ")})`,
        error.details,
        { cause: error },
      );
    }
    deps.logger.warn(
      `kube binaries: the release downloads are unreachable (${reason}): building them from Go modules instead`,
    );
    await buildKubeBinaries(binDir, plan, facts, deps);
    return { binDir, source: "built", unreachable: reason };
  }
}

/** Runs hack/kube-binaries/build.sh into `binDir`, its progress on the logger. */
async function buildKubeBinaries(
  binDir: string,
  plan: BinariesPlan,
  facts: PlanFacts,
  deps: EnsureKubeBinariesDeps,
): Promise<void> {
  const script = facts.buildScript;
  const problem = buildProblemOf(facts);
  if (!script || problem) {
    throw new InfrastructureError(
      "tools/kube-binaries-no-build",
      `kube binaries: cannot build them (${plan.why}): ${problem}`,
    );
  }
  const started = Date.now();
  const lines: string[] = [];
  const onLine = (line: string) => {
    lines.push(line);
    if (line.trim() !== "") deps.logger.info(line);
  };
  const result = await deps.runner
    .run(["bash", "-c", 'exec bash "$0" 1>&2', script], {
      env: {
        RECONCILE_CONFORMANCE_KUBE_BIN_DIR: binDir,
        // The script finds Go on PATH; a `go` found elsewhere by the plan is put first.
        PATH: [dirname(facts.go ?? ""), deps.env.PATH ?? ""].filter(Boolean).join(":"),
      },
      signal: deps.signal,
      onStderrLine: onLine,
    })
    .catch((error: unknown) => {
      throw new InfrastructureError(
        "tools/kube-binaries-build-failed",
        `kube binaries: could not run ${script}: ${describeError(error)}`,
        [],
        { cause: error },
      );
    });
  if (result.exitCode !== 0) {
    throw new InfrastructureError(
      "tools/kube-binaries-build-failed",
      `kube binaries: ${script} failed (exit ${result.exitCode}) building into ${binDir}`,
      tailLines(lines.join("\n") || result.stderr, 20),
    );
  }
  const state = await inspectBinDir(binDir);
  if (state.missing.length > 0) {
    throw new InfrastructureError(
      "tools/kube-binaries-build-failed",
      `kube binaries: ${script} finished but ${state.missing.join(", ")} are not in ${binDir}`,
    );
  }
  deps.logger.info(
    `kube binaries: built in ${Math.round((Date.now() - started) / 1000)}s; ready in ${binDir}`,
  );
}

/** Why the Go build cannot run here, or undefined when it can. */
function buildProblemOf(facts: PlanFacts): string | undefined {
  if (!facts.buildScript) return "hack/kube-binaries/build.sh is not beside the kit";
  if (!facts.go) return "Go is not on PATH (the build needs Go 1.26 or later)";
  return undefined;
}

/**
 * Whether the release downloads can be reached from here: one small
 * request (kubectl's published checksum) with a short timeout. Undefined
 * when reachable, else why not; doctor's answer to "will auto download".
 */
export async function probeReleaseDownloads(
  env: Env,
  platform: ReleasePlatform,
  timeoutMs = 5_000,
): Promise<string | undefined> {
  const files = releaseFiles({ ...platform, ...PINNED_RELEASES, baseUrls: releaseMirrors(env) });
  const kubectl = files.find((file) => file.name === "kubectl") ?? files[0];
  if (!kubectl) return "no release files are known for this machine";
  const url = kubectl.checksum.url;
  try {
    const response = await fetch(url, { method: "HEAD", signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    return undefined;
  } catch (error) {
    if (error instanceof Error && error.name === "TimeoutError")
      return `${url}: no answer within ${timeoutMs / 1000}s`;
    return `${url}: ${unreachableReason(error) ?? describeError(error)}`;
  }
}
