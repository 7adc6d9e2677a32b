import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import {
  cacheRoot,
  CLUSTER_NAME_PATTERN,
  type ClusterConfig,
  type ClusterEnvironment,
} from "../cluster/cluster-config.js";
import { describeError } from "../errors.js";
import { comparableStartTimes, isProcessAlive, processStartTime } from "../process/process-table.js";

/**
 * Who started what. A kit killed with SIGKILL runs no cleanup: its clusters
 * and operators outlive it, and nothing in them says they are orphans. So
 * before the kit starts a cluster or an operator it writes a record naming
 * itself as the owner; the record goes when the thing is stopped normally.
 * A record whose owner is gone marks a leftover, which `clean` removes
 * (src/cleanup/leftovers.ts).
 *
 * Records are JSON files in the kit's cache:
 *   <cache>/kwok/owners/<cluster>.json    a kwok cluster (next to kwokctl's clusters/)
 *   <cache>/kind/owners/<cluster>.json    a kind cluster
 *   <cache>/operators/<id>.json           one process group of an operator under test
 */

/** A process, told apart from a later one that got the same pid. */
export interface ProcessOwner {
  readonly pid: number;
  /** A pid means something only on its own host (the cache may be on a shared file system). */
  readonly hostname: string;
  /**
   * processStartTime of the pid when recorded: clock ticks from /proc on
   * Linux, the second from ps elsewhere; absent where it could not be read.
   */
  readonly startTime?: string;
}

/** This process, as an owner. */
export function currentOwner(): ProcessOwner {
  return describeProcess(process.pid);
}

/** The process with this pid on this host, now. */
export function describeProcess(pid: number): ProcessOwner {
  const startTime = processStartTime(pid);
  return { pid, hostname: hostname(), ...(startTime === undefined ? {} : { startTime }) };
}

/** What the kit asks of the process table to judge an owner; a fake one in tests. */
export interface ProcessProbe {
  hostname(): string;
  isAlive(pid: number): boolean;
  startTime(pid: number): string | undefined;
}

export const systemProbe: ProcessProbe = {
  hostname: () => hostname(),
  isAlive: isProcessAlive,
  startTime: processStartTime,
};

/**
 * `running`: the very process still runs. `gone`: no process has the pid, or
 * one that started at another time (the pid was reused). `elsewhere`: the
 * owner ran on another host; nothing here can tell, so it is never judged.
 */
export type OwnerState = "running" | "gone" | "elsewhere";

export function ownerState(owner: ProcessOwner, probe: ProcessProbe = systemProbe): OwnerState {
  if (owner.hostname !== probe.hostname()) return "elsewhere";
  if (!probe.isAlive(owner.pid)) return "gone";
  const startTime = probe.startTime(owner.pid);
  // Where start times cannot be read, or were read from another source (/proc then ps), a live
  // pid has to be taken for the owner.
  if (
    owner.startTime !== undefined &&
    startTime !== undefined &&
    comparableStartTimes(owner.startTime, startTime) &&
    startTime !== owner.startTime
  )
    return "gone";
  return "running";
}

/**
 * Every process the kit starts for a recorded thing carries this variable,
 * set to the record's path: kwokctl and the control plane it starts, an
 * operator and whatever it spawns. It finds the processes nobody wrote down
 * (a kwokctl still creating the cluster of a dead kit, an operator's child
 * that left its process group), and proves they belong to that record.
 */
export const OWNER_RECORD_ENV = "RECONCILE_CONFORMANCE_RECORD";

/** The environment entry ("NAME=value") that marks the processes of the record at `path`. */
export function ownerRecordEnvEntry(path: string): string {
  return `${OWNER_RECORD_ENV}=${path}`;
}

/** The current version of the record format; a record of another version is not understood. */
export const RECORD_VERSION = 1;

const ownerSchema = z.object({
  pid: z.number().int().positive(),
  hostname: z.string().min(1),
  startTime: z.string().optional(),
});

const clusterName = z
  .string()
  .regex(CLUSTER_NAME_PATTERN, { error: "expected a cluster name (lowercase letters, digits and '-')" });

const common = {
  version: z.literal(RECORD_VERSION),
  owner: ownerSchema,
  createdAt: z.string(),
  /**
   * Set when the owner handed the thing over on purpose (`cluster create`
   * leaves its cluster to the user, to be removed by `cluster delete`): from
   * then on it is nobody's leftover, whatever becomes of the owner.
   */
  releasedAt: z.string().optional(),
};

const kwokClusterRecord = z.object({
  kind: z.literal("kwok-cluster"),
  name: clusterName,
  ...common,
  /** Where kwokctl was taken from; `clean` deletes the cluster with the same kwokctl. */
  binDir: z.string().min(1),
});

const kindClusterRecord = z.object({
  kind: z.literal("kind-cluster"),
  name: clusterName,
  ...common,
  kubeconfigPath: z.string().min(1),
});

const operatorRecord = z.object({
  kind: z.literal("operator"),
  /** A random id, also the record's file name. */
  name: z.string().regex(/^[0-9a-f]{8,64}$/, { error: "expected a hexadecimal id" }),
  ...common,
  argv: z.array(z.string()).min(1),
  cwd: z.string().optional(),
  logFile: z.string(),
  /**
   * The process group's leader (its pid is the group id), added once the
   * operator is spawned; absent when the kit died between writing the record
   * and spawning. Its start time tells the group apart from a later one that
   * got the same id.
   */
  group: ownerSchema.optional(),
});

const ownershipRecord = z.discriminatedUnion("kind", [kwokClusterRecord, kindClusterRecord, operatorRecord]);

export type OwnershipRecord = z.infer<typeof ownershipRecord>;
export type KwokClusterRecord = z.infer<typeof kwokClusterRecord>;
export type KindClusterRecord = z.infer<typeof kindClusterRecord>;
export type OperatorRecord = z.infer<typeof operatorRecord>;
export type OwnedKind = OwnershipRecord["kind"];

/**
 * Parses a record file's text. The record must be named after what it
 * describes (`<name>.json`): a record is only ever looked up by that name,
 * and a mismatch means a file copied or edited by hand. Errors name the file
 * and the field.
 */
export function parseRecord(text: string, path: string): OwnershipRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${path}: not an ownership record: invalid JSON: ${describeError(error)}`, {
      cause: error,
    });
  }
  const parsed = ownershipRecord.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.length === 0 ? "(top level)" : issue.path.join(".")}: ${issue.message}`,
    );
    throw new Error(`${path}: not an ownership record: ${problems.join("; ")}`);
  }
  const expected = `${parsed.data.name}.json`;
  if (basename(path) !== expected) {
    throw new Error(
      `${path}: records ${parsed.data.kind} "${parsed.data.name}", so it must be named ${expected}`,
    );
  }
  return parsed.data;
}

export async function readRecord(path: string): Promise<OwnershipRecord> {
  return parseRecord(await readFile(path, "utf8"), path);
}

/** The record at `path`, or undefined when there is none (it was removed). */
export async function readRecordIfPresent(path: string): Promise<OwnershipRecord | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (error instanceof Error && "code" in error && error.code === "ENOENT") return undefined;
    throw error;
  }
  return parseRecord(text, path);
}

/**
 * Writes a record in one step (a temporary file renamed into place), so a
 * kit killed while writing never leaves half a record to be misread.
 */
export async function writeRecord(path: string, record: OwnershipRecord): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new Error(`cannot write the ownership record ${path}: ${describeError(error)}`, { cause: error });
  }
}

export async function removeRecord(path: string): Promise<void> {
  await rm(path, { force: true });
}

/** The records in `dir`, each parsed or with why it could not be; none when the directory is missing. */
export async function listRecords(
  dir: string,
): Promise<{ readonly path: string; readonly record?: OwnershipRecord; readonly error?: unknown }[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const records = [];
  // Only finished records: a ".tmp" file is a write in progress (or the remains of one).
  for (const name of names.filter((entry) => entry.endsWith(".json")).sort()) {
    const path = join(dir, name);
    try {
      const record = await readRecordIfPresent(path);
      if (record) records.push({ path, record });
    } catch (error) {
      records.push({ path, error });
    }
  }
  return records;
}

/** The directory of the records of kwok clusters, in kwokctl's work directory beside its clusters/. */
export function kwokRecordDir(workDir: string): string {
  return join(workDir, "owners");
}

export function kwokRecordPath(workDir: string, name: string): string {
  return join(kwokRecordDir(workDir), `${name}.json`);
}

export function kindRecordPath(recordDir: string, name: string): string {
  return join(recordDir, `${name}.json`);
}

/** The directory of the records of operator process groups. */
export function operatorRecordDir(environment: ClusterEnvironment): string {
  return join(cacheRoot(environment), "operators");
}

/** A fresh id for an operator's record: one per process group the kit starts. */
export function newOperatorRecordId(): string {
  return randomBytes(8).toString("hex");
}

/** Where the record of the cluster `config` describes lives; undefined for a cluster the kit does not start. */
export function clusterRecordPath(config: ClusterConfig): string | undefined {
  switch (config.provider) {
    case "kwok":
      return kwokRecordPath(config.workDir, config.name);
    case "kind":
      return config.recordDir === undefined ? undefined : kindRecordPath(config.recordDir, config.name);
    case "existing":
      return undefined;
  }
}

/**
 * Hands a cluster the kit created over to the user: it stays after the kit
 * exits on purpose (`cluster create`, a run's `--keep`), so it must no
 * longer count as a leftover once its owner is gone. `cluster delete`
 * still removes it, record and all.
 */
export async function handOverCluster(
  config: ClusterConfig,
  now: () => Date = () => new Date(),
): Promise<void> {
  const path = clusterRecordPath(config);
  if (path === undefined) return;
  const record = await readRecordIfPresent(path);
  if (record === undefined || record.releasedAt !== undefined) return;
  await writeRecord(path, { ...record, releasedAt: now().toISOString() });
}
