import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findLeftovers, leftoverReason, verifiedGroup } from "../../../src/cleanup/leftovers.js";
import {
  handOverCluster,
  kwokRecordPath,
  listRecords,
  operatorRecordDir,
  ownerState,
  parseRecord,
  writeRecord,
  type KindClusterRecord,
  type KwokClusterRecord,
  type OperatorRecord,
  type ProcessProbe,
  OWNER_RECORD_ENV,
  readRecordIfPresent,
  type OwnershipRecord,
} from "../../../src/cleanup/ownership.js";
import { kindRecordDir, kwokWorkDir, parseClusterConfig } from "../../../src/cluster/cluster-config.js";
import { KindProvider } from "../../../src/cluster/kind-provider.js";
import { KWOK_BINARIES, KwokProvider } from "../../../src/cluster/kwok-provider.js";
import type { CommandResult, CommandRunner, RunOptions } from "../../../src/process/command-runner.js";
import { silentLogger } from "../../../src/util/logger.js";

const HOST = "build-host";

/** A process table of a few known processes: pid -> start time. */
function fakeProbe(processes: Record<number, string | undefined>, host = HOST): ProcessProbe {
  return {
    hostname: () => host,
    isAlive: (pid) => pid in processes,
    startTime: (pid) => processes[pid],
  };
}

const owner = { pid: 100, hostname: HOST, startTime: "5000" };

function kwokRecord(fields: Partial<KwokClusterRecord> = {}): KwokClusterRecord {
  return {
    version: 1,
    kind: "kwok-cluster",
    name: "rc-run-abc123",
    owner,
    createdAt: "2026-01-01T00:00:00.000Z",
    binDir: "/bins",
    ...fields,
  };
}

function kindRecord(fields: Partial<KindClusterRecord> = {}): KindClusterRecord {
  return {
    version: 1,
    kind: "kind-cluster",
    name: "rc-kind",
    owner,
    createdAt: "2026-01-01T00:00:00.000Z",
    kubeconfigPath: "/cache/kind/rc-kind.kubeconfig",
    ...fields,
  };
}

function operatorRecord(fields: Partial<OperatorRecord> = {}): OperatorRecord {
  return {
    version: 1,
    kind: "operator",
    name: "0123456789abcdef",
    owner,
    createdAt: "2026-01-01T00:00:00.000Z",
    argv: ["./manager", "--leader-elect=false"],
    logFile: "/reports/operator-1.log",
    group: { pid: 4242, hostname: HOST, startTime: "7000" },
    ...fields,
  };
}

describe("parseRecord", () => {
  it("reads a record back as written", () => {
    const record = kwokRecord();
    expect(parseRecord(JSON.stringify(record), "/c/kwok/owners/rc-run-abc123.json")).toEqual(record);
  });

  it.each<[string, string, string, string]>([
    ["invalid JSON", "{", "/c/owners/x.json", "/c/owners/x.json: not an ownership record: invalid JSON"],
    [
      "a missing owner",
      JSON.stringify({ ...kwokRecord(), owner: undefined }),
      "/c/owners/rc-run-abc123.json",
      "owner:",
    ],
    [
      "a kind the kit does not know",
      JSON.stringify({ ...kwokRecord(), kind: "minikube-cluster" }),
      "/c/owners/rc-run-abc123.json",
      "kind:",
    ],
    [
      "another version",
      JSON.stringify({ ...kwokRecord(), version: 2 }),
      "/c/owners/rc-run-abc123.json",
      "version:",
    ],
    [
      "a name that is a path",
      JSON.stringify(kwokRecord({ name: ".." })),
      "/c/owners/...json",
      "name: expected a cluster name",
    ],
    [
      "a file named after another cluster",
      JSON.stringify(kwokRecord()),
      "/c/owners/other.json",
      'records kwok-cluster "rc-run-abc123", so it must be named rc-run-abc123.json',
    ],
  ])("rejects %s, naming the file and the field", (_, text, path, message) => {
    expect(() => parseRecord(text, path)).toThrow(message);
    expect(() => parseRecord(text, path)).toThrow(path);
  });
});

describe("ownerState", () => {
  it.each<[string, Record<number, string | undefined>, string, string]>([
    ["the owner still runs", { 100: "5000" }, HOST, "running"],
    ["no process has the pid", {}, HOST, "gone"],
    ["the pid now belongs to a later process", { 100: "9999" }, HOST, "gone"],
    ["start times cannot be read (not Linux): a live pid is the owner", { 100: undefined }, HOST, "running"],
    ["the owner ran on another host", {}, "other-host", "elsewhere"],
  ])("%s", (_, processes, host, expected) => {
    expect(ownerState(owner, fakeProbe(processes, host))).toBe(expected);
  });
});

describe("leftoverReason", () => {
  const dead = fakeProbe({});
  const alive = fakeProbe({ 100: "5000" });
  const released = kwokRecord({ releasedAt: "2026-01-02T00:00:00.000Z" });

  it("is a leftover when its owner is gone, and says so", () => {
    expect(leftoverReason(kwokRecord(), { probe: dead })).toBe("started by pid 100, which is gone");
  });

  it("is nobody's leftover while its owner runs, unless all", () => {
    expect(leftoverReason(kwokRecord(), { probe: alive })).toBeUndefined();
    expect(leftoverReason(kwokRecord(), { probe: alive, all: true })).toBe(
      "started by pid 100, which is still running",
    );
  });

  it("is nobody's leftover once handed over (cluster create), unless all", () => {
    expect(leftoverReason(released, { probe: dead })).toBeUndefined();
    expect(leftoverReason(released, { probe: dead, all: true })).toContain("handed over by pid 100");
  });

  it("never judges an owner on another host, even with all", () => {
    expect(leftoverReason(kwokRecord(), { probe: fakeProbe({}, "other-host"), all: true })).toBeUndefined();
  });
});

describe("verifiedGroup", () => {
  it("is the group id while its leader is the recorded process", () => {
    expect(verifiedGroup(operatorRecord(), fakeProbe({ 4242: "7000" }))).toBe(4242);
  });

  it("is undefined once the leader's pid is gone or was reused, or before the spawn", () => {
    expect(verifiedGroup(operatorRecord(), fakeProbe({}))).toBeUndefined();
    expect(verifiedGroup(operatorRecord(), fakeProbe({ 4242: "8000" }))).toBeUndefined();
    expect(verifiedGroup(operatorRecord({ group: undefined }), fakeProbe({ 4242: "7000" }))).toBeUndefined();
  });
});

describe("findLeftovers (records in a cache, a fake process table)", () => {
  const caches: string[] = [];
  afterEach(async () => {
    for (const dir of caches.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  async function cache() {
    const root = await mkdtemp(join(tmpdir(), "rc-ownership-"));
    caches.push(root);
    return { env: { RECONCILE_CONFORMANCE_CACHE: root }, homeDir: "/nonexistent" };
  }

  const living = { pid: 200, hostname: HOST, startTime: "6000" };
  const probe = fakeProbe({ 200: "6000" });

  it("lists what dead owners left, and with all everything of the kit here", async () => {
    const environment = await cache();
    const workDir = kwokWorkDir(environment);
    await writeRecord(kwokRecordPath(workDir, "orphan"), kwokRecord({ name: "orphan" }));
    await writeRecord(kwokRecordPath(workDir, "busy"), kwokRecord({ name: "busy", owner: living }));
    await writeRecord(
      join(kindRecordDir(environment), "kind-orphan.json"),
      kindRecord({ name: "kind-orphan" }),
    );
    const operator = operatorRecord();
    await writeRecord(join(operatorRecordDir(environment), `${operator.name}.json`), operator);
    // A cluster from before records were kept.
    await mkdir(join(workDir, "clusters", "unrecorded"), { recursive: true });

    const found = await findLeftovers(environment, { probe });
    expect(found.map((l) => [l.kind, l.name, l.ownerPid])).toEqual([
      ["operator", operator.name, 100],
      ["kwok-cluster", "orphan", 100],
      ["kind-cluster", "kind-orphan", 100],
    ]);
    expect(found[0]?.description).toBe("operator process group 4242 (./manager --leader-elect=false)");
    expect(found[1]?.path).toBe(kwokRecordPath(workDir, "orphan"));

    const everything = await findLeftovers(environment, { probe, all: true });
    expect(everything.map((l) => [l.kind, l.name])).toEqual([
      ["operator", operator.name],
      ["kwok-cluster", "busy"],
      ["kwok-cluster", "orphan"],
      ["kind-cluster", "kind-orphan"],
      ["kwok-cluster", "unrecorded"],
    ]);
    expect(everything.at(-1)).toMatchObject({
      ownerPid: undefined,
      path: join(workDir, "clusters", "unrecorded"),
      reason: "no record of who started it",
    });
  });

  it("skips a record it cannot read, and says which", async () => {
    const environment = await cache();
    const dir = join(kwokWorkDir(environment), "owners");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "broken.json"), "{ half a rec");
    const unreadable: string[] = [];
    expect(
      await findLeftovers(environment, { probe, onUnreadable: (path) => unreadable.push(path) }),
    ).toEqual([]);
    expect(unreadable).toEqual([join(dir, "broken.json")]);
  });

  it("no longer counts a cluster handed over by cluster create", async () => {
    const environment = await cache();
    const config = parseClusterConfig({ provider: "kwok", name: "mine" }, environment);
    if (config.provider !== "kwok") throw new Error("expected kwok");
    await writeRecord(kwokRecordPath(config.workDir, "mine"), kwokRecord({ name: "mine" }));
    expect((await findLeftovers(environment, { probe })).map((l) => l.name)).toEqual(["mine"]);

    await handOverCluster(config, () => new Date("2026-02-01T00:00:00.000Z"));

    expect(await findLeftovers(environment, { probe })).toEqual([]);
    const [entry] = await listRecords(join(config.workDir, "owners"));
    expect(entry?.record?.releasedAt).toBe("2026-02-01T00:00:00.000Z");
  });

  it("writes a record in one step: no temporary file stays, none is read as a record", async () => {
    const environment = await cache();
    const dir = join(kwokWorkDir(environment), "owners");
    await writeRecord(join(dir, "one.json"), kwokRecord({ name: "one" }));
    await writeFile(join(dir, "two.json.1234abcd.tmp"), "{");
    expect(await readdir(dir)).toEqual(["one.json", "two.json.1234abcd.tmp"]);
    expect((await listRecords(dir)).map((entry) => entry.record?.name)).toEqual(["one"]);
  });
});

describe("providers write the record before they start anything", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  async function tempDir(prefix: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  }

  /** A directory holding executables with the given names (contents irrelevant: the runner is fake). */
  async function binariesIn(...names: string[]): Promise<string> {
    const dir = await tempDir("rc-bins-");
    for (const name of names) {
      await writeFile(join(dir, name), "#!/bin/sh\n");
      await chmod(join(dir, name), 0o755);
    }
    return dir;
  }

  /**
   * A runner that fails the create (`kind create cluster`, `kwokctl create cluster`) and
   * notes the record as it was at that moment, and the mark the command was given.
   */
  function failingCreate(recordPath: string) {
    const seen: { record?: OwnershipRecord; mark?: string }[] = [];
    const runner: CommandRunner = {
      run: async (argv, options?: RunOptions): Promise<CommandResult> => {
        if (argv[1] === "create" && argv[2] === "cluster") {
          seen.push({
            record: await readRecordIfPresent(recordPath),
            mark: options?.env?.[OWNER_RECORD_ENV],
          });
          return { exitCode: 1, stdout: "", stderr: "boom\n" };
        }
        return { exitCode: 0, stdout: "", stderr: "" };
      },
    };
    return { runner, seen };
  }

  it("kwok: the record names this process while kwokctl creates, and goes with the failed create", async () => {
    const binDir = await binariesIn(...KWOK_BINARIES);
    const workDir = await tempDir("rc-kwok-work-");
    const recordPath = kwokRecordPath(workDir, "dev");
    const { runner, seen } = failingCreate(recordPath);
    const provider = new KwokProvider(
      { provider: "kwok", name: "dev", binDir, workDir },
      { runner, logger: silentLogger },
    );

    await expect(provider.create()).rejects.toThrow("kwokctl create cluster exited with 1");

    expect(provider.recordPath).toBe(recordPath);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.mark).toBe(recordPath);
    expect(seen[0]?.record).toMatchObject({
      kind: "kwok-cluster",
      name: "dev",
      binDir,
      owner: { pid: process.pid },
    });
    expect(await readRecordIfPresent(recordPath)).toBeUndefined();
  });

  it("kind: the record names this process while kind creates, and goes with the failed create", async () => {
    const path = await binariesIn("kind", "docker");
    const cache = await tempDir("rc-kind-cache-");
    const recordDir = join(cache, "kind", "owners");
    const recordPath = join(recordDir, "ci.json");
    const { runner, seen } = failingCreate(recordPath);
    const provider = new KindProvider(
      { provider: "kind", name: "ci", kubeconfigPath: join(cache, "kind", "ci.kubeconfig"), recordDir },
      { runner, logger: silentLogger, path },
    );

    await expect(provider.create()).rejects.toThrow('kind create cluster "ci" exited with 1');

    expect(seen).toHaveLength(1);
    expect(seen[0]?.mark).toBe(recordPath);
    expect(seen[0]?.record).toMatchObject({ kind: "kind-cluster", name: "ci", owner: { pid: process.pid } });
    expect(await readRecordIfPresent(recordPath)).toBeUndefined();
  });
});
