import { readdir } from "node:fs/promises";
import { join } from "node:path";
import {
  CLUSTER_NAME_PATTERN,
  defaultKubeBinDir,
  kindRecordDir,
  kwokWorkDir,
  type ClusterEnvironment,
} from "../cluster/cluster-config.js";
import { KindProvider } from "../cluster/kind-provider.js";
import { KwokProvider } from "../cluster/kwok-provider.js";
import { describeError, InfrastructureError } from "../errors.js";
import type { CommandRunner } from "../process/command-runner.js";
import { findProcessesByEnvironment, processGroupMembers, signalProcess } from "../process/process-table.js";
import { pathExists } from "../util/files.js";
import type { Logger } from "../util/logger.js";
import { pollUntil, PollTimeoutError } from "../util/poll.js";
import {
  kwokRecordDir,
  listRecords,
  operatorRecordDir,
  ownerRecordEnvEntry,
  ownerState,
  readRecordIfPresent,
  removeRecord,
  systemProbe,
  type OperatorRecord,
  type OwnedKind,
  type OwnershipRecord,
  type ProcessProbe,
} from "./ownership.js";

/**
 * Finding and removing what dead kits left running: clusters and operator
 * process groups whose ownership record (ownership.ts) names an owner that
 * is gone. A thing whose owner still runs is never touched, unless `all`
 * asks for everything of the kit.
 */

/** Something the kit started that `clean` would remove. */
export interface Leftover {
  readonly kind: OwnedKind;
  /** The cluster's name; for an operator, its record's id. */
  readonly name: string;
  /** The kit process that started it; undefined for a kwok cluster without a record (with `all` only). */
  readonly ownerPid: number | undefined;
  /** Its ownership record; for a kwok cluster without one, the cluster's directory. */
  readonly path: string;
  /** Why it is a leftover, for people: whose it was and what became of them. */
  readonly reason: string;
  /** What it is, for people: "kwok cluster rc-run-1a2b3c", "operator process group 4242 (./manager)". */
  readonly description: string;
  readonly record: OwnershipRecord | undefined;
}

export interface FindLeftoversOptions {
  /** Everything of the kit in this cache, whoever started it and whether it still runs. */
  readonly all?: boolean;
  readonly probe?: ProcessProbe;
  /** Told about each record that cannot be read; such a record is skipped. */
  readonly onUnreadable?: (path: string, error: unknown) => void;
}

/**
 * Why the thing `record` describes is a leftover, or undefined when it is
 * not. Never one whose owner ran on another host: its processes are there,
 * and pids from there mean nothing here.
 */
export function leftoverReason(
  record: OwnershipRecord,
  options: { readonly all?: boolean; readonly probe?: ProcessProbe } = {},
): string | undefined {
  const all = options.all ?? false;
  const owner = `pid ${record.owner.pid}`;
  const state = ownerState(record.owner, options.probe ?? systemProbe);
  if (state === "elsewhere") return undefined;
  if (record.releasedAt !== undefined) {
    return all ? `handed over by ${owner} at ${record.releasedAt}` : undefined;
  }
  if (state === "gone") return `started by ${owner}, which is gone`;
  return all ? `started by ${owner}, which is still running` : undefined;
}

/** "kwok cluster N", "kind cluster N", "operator process group G (argv)". */
export function describeLeftover(leftover: Pick<Leftover, "kind" | "name" | "record">): string {
  switch (leftover.kind) {
    case "kwok-cluster":
      return `kwok cluster ${leftover.name}`;
    case "kind-cluster":
      return `kind cluster ${leftover.name}`;
    case "operator": {
      const record = leftover.record?.kind === "operator" ? leftover.record : undefined;
      const group = record?.group === undefined ? "not yet spawned" : `process group ${record.group.pid}`;
      return `operator ${group} (${record?.argv.join(" ") ?? leftover.name})`;
    }
  }
}

/** The kit's leftovers in the cache `environment` names: operators first, then clusters. */
export async function findLeftovers(
  environment: ClusterEnvironment,
  options: FindLeftoversOptions = {},
): Promise<Leftover[]> {
  const found: Leftover[] = [];
  const consider = async (dir: string, kind: OwnedKind) => {
    for (const entry of await listRecords(dir)) {
      if (entry.record === undefined) {
        options.onUnreadable?.(entry.path, entry.error);
        continue;
      }
      const { record } = entry;
      if (record.kind !== kind) {
        options.onUnreadable?.(
          entry.path,
          new Error(`${entry.path}: a ${record.kind} record among ${kind}s`),
        );
        continue;
      }
      const reason = leftoverReason(record, options);
      if (reason === undefined) continue;
      found.push({
        kind,
        name: record.name,
        ownerPid: record.owner.pid,
        path: entry.path,
        reason,
        description: describeLeftover({ kind, name: record.name, record }),
        record,
      });
    }
  };
  const workDir = kwokWorkDir(environment);
  await consider(operatorRecordDir(environment), "operator");
  await consider(kwokRecordDir(workDir), "kwok-cluster");
  await consider(kindRecordDir(environment), "kind-cluster");
  if (options.all) {
    // Clusters from before records were kept, or whose record was removed by hand.
    const clustersDir = join(workDir, "clusters");
    const recorded = new Set(found.filter((l) => l.kind === "kwok-cluster").map((l) => l.name));
    for (const name of (await readdir(clustersDir).catch(() => [] as string[])).sort()) {
      if (recorded.has(name) || !CLUSTER_NAME_PATTERN.test(name)) continue;
      // A record that exists but was not listed names an owner on another host: leave it.
      if (await pathExists(join(kwokRecordDir(workDir), `${name}.json`))) continue;
      found.push({
        kind: "kwok-cluster",
        name,
        ownerPid: undefined,
        path: join(clustersDir, name),
        reason: "no record of who started it",
        description: `kwok cluster ${name}`,
        record: undefined,
      });
    }
  }
  return found;
}

export interface RemoveLeftoversDeps {
  readonly runner: CommandRunner;
  readonly logger: Logger;
  /** The `all` the leftovers were found with: each is judged again just before it is removed. */
  readonly all?: boolean;
  readonly probe?: ProcessProbe;
}

/** What became of one leftover. */
export type RemovalOutcome =
  | { readonly leftover: Leftover; readonly status: "removed" }
  /** It stopped being a leftover between finding and removing (its owner deleted it, a new owner took the name). */
  | { readonly leftover: Leftover; readonly status: "skipped"; readonly why: string }
  | { readonly leftover: Leftover; readonly status: "failed"; readonly error: unknown };

/** How long killed processes get to disappear. */
const KILL_TIMEOUT_MS = 10_000;

/**
 * Removes each leftover, in order, and says what became of it; one that
 * fails does not stop the others. Kwok clusters: every process marked as
 * the cluster's killed (a kwokctl of the dead kit may still be creating it),
 * then the kwok provider's own delete (`kwokctl delete cluster`, then the
 * processes of its pid files and the directory, whatever kwokctl made of
 * it). Kind clusters: `kind delete cluster`. Operators: SIGKILL to the
 * process group, once its leader is shown to be the recorded process, and
 * to every process marked as the operator's.
 */
export async function removeLeftovers(
  environment: ClusterEnvironment,
  leftovers: readonly Leftover[],
  deps: RemoveLeftoversDeps,
): Promise<RemovalOutcome[]> {
  const outcomes: RemovalOutcome[] = [];
  for (const leftover of leftovers) {
    try {
      const changed = await stillALeftover(leftover, deps);
      if (changed !== undefined) {
        outcomes.push({ leftover, status: "skipped", why: changed });
        continue;
      }
      switch (leftover.kind) {
        case "kwok-cluster":
          await removeKwokCluster(environment, leftover, deps);
          break;
        case "kind-cluster":
          await removeKindCluster(environment, leftover, deps);
          break;
        case "operator":
          await removeOperator(leftover);
          break;
      }
      outcomes.push({ leftover, status: "removed" });
    } catch (error) {
      outcomes.push({ leftover, status: "failed", error });
    }
  }
  return outcomes;
}

/**
 * Undefined when the leftover's record is still the one it was found by and
 * still makes it a leftover; otherwise what changed. Between finding and
 * removing, the owner may have deleted it, or a new kit may have started a
 * cluster of the same name.
 */
async function stillALeftover(leftover: Leftover, deps: RemoveLeftoversDeps): Promise<string | undefined> {
  if (leftover.record === undefined) return undefined;
  const current = await readRecordIfPresent(leftover.path);
  if (current === undefined) return "its record was removed meanwhile";
  if (current.createdAt !== leftover.record.createdAt || current.owner.pid !== leftover.record.owner.pid) {
    return `its record now names another owner, pid ${current.owner.pid}`;
  }
  if (leftoverReason(current, deps) === undefined)
    return "it is no longer a leftover: its owner handed it over";
  return undefined;
}

async function removeKwokCluster(
  environment: ClusterEnvironment,
  leftover: Leftover,
  deps: RemoveLeftoversDeps,
): Promise<void> {
  const workDir = kwokWorkDir(environment);
  const recorded = leftover.record?.kind === "kwok-cluster" ? leftover.record.binDir : undefined;
  // The kwokctl that created it if it is still there; the cache's otherwise.
  const binDir =
    recorded !== undefined && (await pathExists(join(recorded, "kwokctl")))
      ? recorded
      : defaultKubeBinDir(environment);
  const provider = new KwokProvider({ provider: "kwok", name: leftover.name, binDir, workDir }, deps);
  // A kwokctl of the dead kit may still be starting components: a delete under it would be undone.
  await killMarked(provider.recordPath, `kwok cluster ${leftover.name}`);
  await provider.delete();
  await killMarked(provider.recordPath, `kwok cluster ${leftover.name}`);
}

async function removeKindCluster(
  environment: ClusterEnvironment,
  leftover: Leftover,
  deps: RemoveLeftoversDeps,
): Promise<void> {
  if (leftover.record?.kind !== "kind-cluster") {
    throw new Error(`kind cluster ${leftover.name}: no record to delete it by (${leftover.path})`);
  }
  const provider = new KindProvider(
    {
      provider: "kind",
      name: leftover.name,
      kubeconfigPath: leftover.record.kubeconfigPath,
      recordDir: kindRecordDir(environment),
    },
    deps,
  );
  // A `kind create cluster` of the dead kit may still be at work.
  await killMarked(leftover.path, `kind cluster ${leftover.name}`);
  await provider.delete();
  // Killing kind does not cancel a `docker run` dockerd is already carrying out: a node container
  // can appear after the delete. Look again until kind lists the cluster no more.
  for (let round = 0; round < 5; round++) {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    if ((await provider.delete()) === "absent") return;
  }
}

async function removeOperator(leftover: Leftover): Promise<void> {
  if (leftover.record?.kind !== "operator") {
    throw new Error(`operator ${leftover.name}: no record to find it by (${leftover.path})`);
  }
  const group = verifiedGroup(leftover.record);
  if (group !== undefined) signalProcess(-group, "SIGKILL");
  await killMarked(leftover.path, leftover.description, () =>
    group === undefined ? [] : processGroupMembers(group),
  );
  await removeRecord(leftover.path);
}

/**
 * The operator's process group id, when the group still exists and its
 * leader is the recorded process (same pid, same start time): a group id
 * is a pid, and a pid is reused once its process is gone. Undefined when
 * there is no such group; its marked processes are still found and killed.
 */
export function verifiedGroup(record: OperatorRecord, probe: ProcessProbe = systemProbe): number | undefined {
  if (record.group === undefined) return undefined;
  return ownerState(record.group, probe) === "running" ? record.group.pid : undefined;
}

/**
 * SIGKILL to every live process marked with the record at `recordPath`
 * (and to those `also` lists), again until none is left, since a parent
 * killed in the middle of a fork may still have started one. Throws,
 * naming them, when some outlive the deadline.
 */
async function killMarked(recordPath: string, what: string, also: () => number[] = () => []): Promise<void> {
  const entry = ownerRecordEnvEntry(recordPath);
  const living = () => [...new Set([...findProcessesByEnvironment(entry), ...also()])];
  try {
    await pollUntil(
      () => {
        const pids = living();
        if (pids.length === 0) return { done: true, value: undefined };
        for (const pid of pids) signalProcess(pid, "SIGKILL");
        return { done: false, reason: `alive: ${pids.join(", ")}` };
      },
      { description: `the processes of ${what} to die`, timeoutMs: KILL_TIMEOUT_MS, intervalMs: 50 },
    );
  } catch (error) {
    if (!(error instanceof PollTimeoutError)) throw error;
    throw new InfrastructureError(
      "cleanup/processes-survived",
      `${what}: processes still running after SIGKILL: ${living().join(", ")}`,
    );
  }
}

/**
 * For the start of a run: says what dead kits left running, one line each,
 * and how to remove it, without removing anything (another kit's leftovers
 * are not a run's business, and removing takes time). Never fails the run:
 * a cache it cannot read is only mentioned in --verbose.
 */
export async function reportLeftovers(environment: ClusterEnvironment, logger: Logger): Promise<Leftover[]> {
  let leftovers: Leftover[];
  try {
    leftovers = await findLeftovers(environment, {
      onUnreadable: (path, error) => logger.debug(`ignoring ${path}: ${describeError(error)}`),
    });
  } catch (error) {
    logger.debug(`could not look for leftovers of earlier runs: ${describeError(error)}`);
    return [];
  }
  for (const leftover of leftovers) {
    logger.warn(`left over from an earlier kit: ${leftover.description}, ${leftover.reason}`);
  }
  if (leftovers.length > 0) {
    logger.warn(
      `remove ${leftovers.length === 1 ? "it" : "them"} with: reconcile-conformance clean (--dry-run to list first)`,
    );
  }
  return leftovers;
}
