import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanCommand } from "../../src/cli/clean-command.js";
import {
  describeProcess,
  operatorRecordDir,
  ownerRecordEnvEntry,
  OWNER_RECORD_ENV,
  readRecordIfPresent,
  writeRecord,
  type OperatorRecord,
  type ProcessOwner,
} from "../../src/cleanup/ownership.js";
import type { ClusterEnvironment } from "../../src/cluster/cluster-config.js";
import { ExitCode } from "../../src/errors.js";
import type { KubeClient } from "../../src/kube/kube-client.js";
import { OperatorProcess } from "../../src/operator/operator-process.js";
import {
  findProcessesByEnvironment,
  isProcessAlive,
  processGroupMembers,
  signalProcess,
  processTableSource,
} from "../../src/process/process-table.js";
import type { ApiProxy } from "../../src/proxy/api-proxy.js";
import { WriteLog } from "../../src/proxy/write-log.js";
import { pollUntil } from "../../src/util/poll.js";
import { runInContext } from "../support/command-context.js";

// Operator process groups, recorded and cleaned: real processes (sleep) in
// groups of their own, the way OperatorProcess starts operators, and records
// in a cache of the test's own. No cluster is needed.

const groups: number[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const group of groups.splice(0)) signalProcess(-group, "SIGKILL");
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function isolatedCache(): Promise<ClusterEnvironment> {
  const root = await mkdtemp(join(tmpdir(), "rc-clean-unit-"));
  dirs.push(root);
  return { env: { RECONCILE_CONFORMANCE_CACHE: root }, homeDir: "/nonexistent" };
}

/** The pid of a process that has exited: an owner that is gone. */
function deadOwner(): ProcessOwner {
  const child = spawnSync(process.execPath, ["-e", ""]);
  if (child.pid === undefined) throw new Error("could not start a child");
  return { pid: child.pid, hostname: hostname() };
}

/** A process group (a shell and its sleeping child), optionally marked with a record's path. */
/** A process group of two (sh and its sleep), once both exist: sh forks its child a moment after it starts. */
async function startGroup(marker?: string): Promise<number> {
  const child = spawn("sh", ["-c", "sleep 600 & wait"], {
    detached: true,
    stdio: "ignore",
    env: { ...process.env, ...(marker === undefined ? {} : { [OWNER_RECORD_ENV]: marker }) },
  });
  if (child.pid === undefined) throw new Error("could not start sh");
  groups.push(child.pid);
  const pid = child.pid;
  for (let waited = 0; processGroupMembers(pid).length < 2 && waited < 5000; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return pid;
}

function clean(environment: ClusterEnvironment, args: string[] = []) {
  return runInContext((context) => cleanCommand(args, context), { environment });
}

async function recordOperator(
  environment: ClusterEnvironment,
  fields: { owner: ProcessOwner; group?: ProcessOwner },
): Promise<string> {
  const name = "00112233445566778899";
  const path = join(operatorRecordDir(environment), `${name}.json`);
  const record: OperatorRecord = {
    version: 1,
    kind: "operator",
    name,
    createdAt: new Date().toISOString(),
    argv: ["sh", "-c", "sleep 600 & wait"],
    logFile: "/dev/null",
    ...fields,
  };
  await writeRecord(path, record);
  return path;
}

/** The live processes of a group. */
function membersOf(group: number): number[] {
  return processGroupMembers(group);
}

describe("clean: operator process groups", () => {
  it("kills the group of a dead kit's operator, and every process marked as its, then removes the record", async () => {
    const environment = await isolatedCache();
    const path = join(operatorRecordDir(environment), "00112233445566778899.json");
    const group = await startGroup(path);
    // One that left the group (a session of its own: detached calls setsid, which macOS has no command for)
    // but still carries the mark.
    const escaped = spawn("sleep", ["600"], {
      stdio: "ignore",
      detached: true,
      env: { ...process.env, [OWNER_RECORD_ENV]: path },
    });
    if (escaped.pid === undefined) throw new Error("could not start sleep");
    groups.push(escaped.pid);
    await recordOperator(environment, { owner: deadOwner(), group: describeProcess(group) });
    expect(membersOf(group).length).toBeGreaterThan(0);

    const listed = await clean(environment, ["--dry-run"]);
    expect(listed.code).toBe(ExitCode.ok);
    expect(listed.stdout).toContain(`would remove operator process group ${group} (sh -c sleep 600 & wait)`);
    expect(membersOf(group).length).toBeGreaterThan(0);

    const cleaned = await clean(environment);

    expect(cleaned.code, cleaned.stdout).toBe(ExitCode.ok);
    expect(cleaned.stdout).toContain(`removed operator process group ${group}`);
    expect(cleaned.stdout).toContain("which is gone");
    expect(membersOf(group)).toEqual([]);
    expect(findProcessesByEnvironment(ownerRecordEnvEntry(path))).toEqual([]);
    expect(await readRecordIfPresent(path)).toBeUndefined();
  });

  it("does not signal a group whose leader is not the recorded process (its pid was reused)", async () => {
    const environment = await isolatedCache();
    const stranger = await startGroup();
    const path = await recordOperator(environment, {
      owner: deadOwner(),
      // A start time long gone, in the form the process table in use writes (clock ticks, or a date from ps).
      group: {
        pid: stranger,
        hostname: hostname(),
        startTime: processTableSource() === "proc" ? "1" : "2000-01-01T00:00:00Z",
      },
    });

    const cleaned = await clean(environment);

    expect(cleaned.code, cleaned.stdout).toBe(ExitCode.ok);
    expect(isProcessAlive(stranger)).toBe(true);
    expect(membersOf(stranger).length).toBe(2);
    expect(await readRecordIfPresent(path)).toBeUndefined();
  });

  it("leaves the operator of a kit that still runs alone", async () => {
    const environment = await isolatedCache();
    const path = join(operatorRecordDir(environment), "00112233445566778899.json");
    const group = await startGroup(path);
    await recordOperator(environment, { owner: describeProcess(process.pid), group: describeProcess(group) });

    const cleaned = await clean(environment);

    expect(cleaned).toMatchObject({ code: ExitCode.ok, stdout: "" });
    expect(membersOf(group).length).toBe(2);
    expect(await readRecordIfPresent(path)).toBeDefined();
  });

  it("says there is nothing to clean, and rejects stray arguments", async () => {
    const environment = await isolatedCache();
    expect(await clean(environment)).toMatchObject({ code: ExitCode.ok, stdout: "" });
    await expect(clean(environment, ["everything"])).rejects.toThrow(
      'clean: unexpected argument "everything"',
    );
  });
});

describe("OperatorProcess ownership records", () => {
  /** Just enough of a proxy for start/stop: the operator counts as started at once. */
  function fakeProxy(): ApiProxy {
    const fake = {
      writeKubeconfig: async (path: string) => {
        await writeFile(path, "");
        return path;
      },
      beginOperatorRun: () => undefined,
      operatorRequestCount: 0,
      refusedRequestCount: 0,
      readCount: 0,
      sawRead: () => true,
      writeLog: new WriteLog(),
    };
    return fake as unknown as ApiProxy;
  }

  it("records the group before it runs, with its leader, and removes the record on stop", async () => {
    const environment = await isolatedCache();
    const recordDir = operatorRecordDir(environment);
    const workDir = await mkdtemp(join(tmpdir(), "rc-operator-record-"));
    dirs.push(workDir);
    const operator = new OperatorProcess({
      command: { argv: ["sh", "-c", "sleep 600 & wait"] },
      proxy: fakeProxy(),
      customResource: { group: "example.com", resource: "things" },
      workDir,
      kube: {} as unknown as KubeClient,
      recordDir,
      stopGraceMs: 2_000,
    });
    await operator.start();
    const pgid = operator.pgid;
    if (pgid === undefined) throw new Error("no process group");
    groups.push(pgid);

    const [file] = await readdir(recordDir);
    const record = await readRecordIfPresent(join(recordDir, file ?? ""));
    expect(record).toMatchObject({
      kind: "operator",
      owner: { pid: process.pid },
      group: { pid: pgid },
      argv: ["sh", "-c", "sleep 600 & wait"],
    });
    // The shell forks its `sleep` after start() returns: wait for both members of the group
    // (a read between the fork and the exec may also see no environment yet), then compare.
    const entry = ownerRecordEnvEntry(join(recordDir, file ?? ""));
    const [marked, members] = await pollUntil(
      () => {
        const found = findProcessesByEnvironment(entry).sort();
        const group = operator.processIds().sort();
        return group.length === 2 && found.length === 2
          ? { done: true, value: [found, group] as const }
          : { done: false, reason: `group ${group.join(", ")}; marked ${found.join(", ")}` };
      },
      { description: "the operator's shell and its sleep, both marked", timeoutMs: 5_000, intervalMs: 20 },
    );
    expect(marked).toEqual(members);

    await operator.stop();

    expect(operator.processIds()).toEqual([]);
    expect(await readdir(recordDir)).toEqual([]);
  });
});
