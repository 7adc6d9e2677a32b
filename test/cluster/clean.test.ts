import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { cleanCommand } from "../../src/cli/clean-command.js";
import { findLeftovers, removeLeftovers } from "../../src/cleanup/leftovers.js";
import {
  kwokRecordPath,
  listRecords,
  operatorRecordDir,
  type OperatorRecord,
} from "../../src/cleanup/ownership.js";
import {
  defaultKubeBinDir,
  kwokWorkDir,
  parseClusterConfig,
  processEnvironment,
  type ClusterEnvironment,
} from "../../src/cluster/cluster-config.js";
import { KwokProvider } from "../../src/cluster/kwok-provider.js";
import { zxCommandRunner } from "../../src/process/command-runner.js";
import { isProcessAlive, processGroupMembers, signalProcess } from "../../src/process/process-table.js";
import { pathExists } from "../../src/util/files.js";
import { silentLogger } from "../../src/util/logger.js";
import { pollUntil } from "../../src/util/poll.js";
import { runInContext } from "../support/command-context.js";
import { uniqueClusterName } from "../support/kwok-cluster.js";
import { exampleDir, exampleOperatorBinary } from "../support/webapp-example.js";

// A kit killed with SIGKILL runs no cleanup. These kill the committed bundle
// (dist/cli.js) at each point where it has something running, then `clean`
// must find and remove all of it by the records the kit wrote; and a cluster
// whose owner still runs, or that `cluster create` handed over, is left
// alone. Each test has a cache of its own (RECONCILE_CONFORMANCE_CACHE in a
// temporary directory, the real Kubernetes binaries): `--all` is only ever
// used there, never on the real cache other tests share.

const CLI = join(import.meta.dirname, "../../dist/cli.js");
const KUBE_BIN_DIR = defaultKubeBinDir(processEnvironment());

/** A cache of the test's own, and the names of the clusters started in it. */
interface Sandbox {
  readonly root: string;
  readonly environment: ClusterEnvironment;
  readonly names: string[];
}

/** A kit process the test started and may kill. */
interface Kit {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly output: { stdout: string; stderr: string };
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const sandboxes: Sandbox[] = [];
const kits: Kit[] = [];

afterEach(async () => {
  for (const kit of kits.splice(0)) {
    kit.child.kill("SIGKILL");
    await kit.exited;
  }
  // Whatever a failed assertion left: everything of the sandbox, by the kit's own cleanup and then by force.
  for (const box of sandboxes.splice(0)) {
    const leftovers = await findLeftovers(box.environment, { all: true }).catch(() => []);
    await removeLeftovers(box.environment, leftovers, {
      runner: zxCommandRunner,
      logger: silentLogger,
      all: true,
    }).catch(() => []);
    for (const pid of sandboxProcesses(box)) signalProcess(pid, "SIGKILL");
    await rm(box.root, { recursive: true, force: true });
  }
}, 120_000);

async function sandbox(): Promise<Sandbox> {
  const root = await mkdtemp(join(tmpdir(), "rc-clean-"));
  const box: Sandbox = {
    root,
    environment: {
      env: {
        ...process.env,
        RECONCILE_CONFORMANCE_CACHE: root,
        RECONCILE_CONFORMANCE_KUBE_BIN_DIR: KUBE_BIN_DIR,
      },
      homeDir: processEnvironment().homeDir,
    },
    names: [],
  };
  sandboxes.push(box);
  return box;
}

function clusterName(box: Sandbox, prefix: string): string {
  const name = uniqueClusterName(prefix);
  box.names.push(name);
  return name;
}

/** Starts dist/cli.js with the sandbox's cache. */
function startKit(box: Sandbox, args: string[]): Kit {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...box.environment.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error("could not start dist/cli.js");
  const output = { stdout: "", stderr: "" };
  child.stdout?.on("data", (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output.stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, signal) => resolve({ code, signal })),
  );
  const kit = { child, pid: child.pid, output, exited };
  kits.push(kit);
  return kit;
}

/** SIGKILL to the kit, as an OOM killer or a cancelled CI job would; resolves once it is dead. */
async function killKit(kit: Kit): Promise<void> {
  kit.child.kill("SIGKILL");
  const exit = await kit.exited;
  expect(exit.signal, kit.output.stderr).toBe("SIGKILL");
}

/** `clean` in-process, on the sandbox's cache. */
function clean(box: Sandbox, args: string[] = []) {
  return runInContext((context) => cleanCommand(args, context), {
    runner: zxCommandRunner,
    environment: box.environment,
  });
}

/** `clean` through the committed bundle, on the sandbox's cache. */
function cleanByCli(box: Sandbox): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const kit = startKit(box, ["clean"]);
  return kit.exited.then(({ code }) => ({ code, ...kit.output }));
}

function clusterDir(box: Sandbox, name: string): string {
  return join(kwokWorkDir(box.environment), "clusters", name);
}

/** The pids kwokctl wrote for the cluster's components. */
async function pidFilePids(box: Sandbox, name: string): Promise<number[]> {
  const dir = join(clusterDir(box, name), "pids");
  const files = await readdir(dir).catch(() => [] as string[]);
  const pids: number[] = [];
  for (const file of files) {
    const pid = Number.parseInt(await readFile(join(dir, file), "utf8").catch(() => ""), 10);
    if (Number.isInteger(pid) && pid > 0) pids.push(pid);
  }
  return pids;
}

/**
 * Every live process of the sandbox, found by reading /proc: a command line
 * that mentions the sandbox's directory or one of its cluster names, or an
 * environment the kit passed on (its cache setting) to what it started.
 */
function sandboxProcesses(box: Sandbox): number[] {
  const cacheSetting = `RECONCILE_CONFORMANCE_CACHE=${box.root}`;
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
      const environment = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      const mentions =
        commandLine.includes(box.root) ||
        box.names.some((name) => commandLine.includes(name)) ||
        environment.includes(cacheSetting);
      if (mentions && isProcessAlive(pid)) found.push(pid);
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

/** The operator records in the sandbox's cache. */
async function operatorRecords(box: Sandbox): Promise<{ path: string; record: OperatorRecord }[]> {
  const records = [];
  for (const entry of await listRecords(operatorRecordDir(box.environment))) {
    if (entry.record?.kind === "operator") records.push({ path: entry.path, record: entry.record });
  }
  return records;
}

/** Live processes of the operators' groups, as their records name them. */
async function operatorProcesses(box: Sandbox): Promise<number[]> {
  return (await operatorRecords(box)).flatMap(({ record }) =>
    record.group === undefined ? [] : processGroupMembers(record.group.pid),
  );
}

/** Asserts that nothing of the sandbox runs and no cluster directory or record is left. */
async function expectNothingLeft(box: Sandbox, started: readonly number[]): Promise<void> {
  expect(started.filter(isProcessAlive)).toEqual([]);
  expect(sandboxProcesses(box)).toEqual([]);
  for (const name of box.names) {
    expect(await pathExists(clusterDir(box, name))).toBe(false);
    expect(await pathExists(kwokRecordPath(kwokWorkDir(box.environment), name))).toBe(false);
  }
  expect(await operatorRecords(box)).toEqual([]);
  expect(await findLeftovers(box.environment, { all: true })).toEqual([]);
}

/** The example operator's contract with its built binary, in the sandbox. */
async function exampleContract(box: Sandbox, binary: string): Promise<string> {
  const contract = parse(await readFile(join(exampleDir, "reconcile-conformance.yaml"), "utf8")) as Record<
    string,
    unknown
  >;
  const file = join(box.root, "reconcile-conformance.yaml");
  await writeFile(
    file,
    stringify({
      ...contract,
      // The built binary: its build script would build again into the sandbox's cache.
      operator: { ...(contract.operator as object), command: [binary, "--leader-elect=false"] },
      crds: [join(exampleDir, "crds/webapp.yaml")],
      sample: join(exampleDir, "samples/webapp.yaml"),
    }),
  );
  return file;
}

let operatorBinary: string;
beforeAll(() => {
  operatorBinary = exampleOperatorBinary();
}, 600_000);

/** Starts `run` of the example contract's drift suite, on a cluster of the sandbox named after `prefix`. */
async function startDriftRun(box: Sandbox, prefix: string): Promise<{ name: string; kit: Kit }> {
  const name = clusterName(box, prefix);
  const contract = await exampleContract(box, operatorBinary);
  const kit = startKit(box, [
    "run",
    ...["--config", contract, "--suite", "drift", "--name", name],
    ...["--report-dir", join(box.root, "report")],
  ]);
  return { name, kit };
}

/**
 * SIGKILL to a run of the cluster `name` whose operator runs; asserts that an operator outlived
 * it, and returns every process it left: the operators', the control plane's, the sandbox's.
 */
async function killRun(box: Sandbox, name: string, kit: Kit): Promise<number[]> {
  await killKit(kit);
  const operators = await operatorProcesses(box);
  const started = [...operators, ...(await pidFilePids(box, name)), ...sandboxProcesses(box)];
  expect(operators.filter(isProcessAlive).length).toBeGreaterThan(0);
  return started;
}

describe("clean after a kit killed with SIGKILL", () => {
  it("removes the control plane of a cluster create killed midway", async () => {
    const box = await sandbox();
    const name = clusterName(box, "rc-clean-create");
    const kit = startKit(box, ["cluster", "create", "--name", name]);

    // Killed as soon as a control-plane process runs, i.e. while kwokctl is still bringing it up.
    await pollUntil(
      async () => {
        if (kit.child.exitCode !== null) throw new Error(`the kit exited early: ${kit.output.stderr}`);
        const running = (await pidFilePids(box, name)).filter(isProcessAlive);
        return running.length > 0
          ? { done: true, value: undefined }
          : { done: false, reason: "no control-plane process yet" };
      },
      { description: "the first control-plane process", timeoutMs: 60_000, intervalMs: 10 },
    );
    await killKit(kit);
    // It never printed the kubeconfig: the create had not finished.
    expect(kit.output.stdout).toBe("");
    const started = [...(await pidFilePids(box, name)), ...sandboxProcesses(box)];
    expect(started.filter(isProcessAlive).length).toBeGreaterThan(0);
    const leftovers = await findLeftovers(box.environment);
    expect(leftovers).toEqual([
      expect.objectContaining({
        kind: "kwok-cluster",
        name,
        ownerPid: kit.pid,
        path: kwokRecordPath(kwokWorkDir(box.environment), name),
      }),
    ]);

    const cleaned = await clean(box);

    expect(cleaned.code, cleaned.stdout + cleaned.stderr).toBe(0);
    expect(cleaned.stdout).toContain(
      `removed kwok cluster ${name} (started by pid ${kit.pid}, which is gone`,
    );
    await expectNothingLeft(box, started);
  });

  it("removes the operator and the cluster of a run killed while its operator runs", async () => {
    const box = await sandbox();
    const { name, kit } = await startDriftRun(box, "rc-clean-run");

    await pollUntil(
      async () => {
        if (kit.child.exitCode !== null) throw new Error(`the run ended early: ${kit.output.stderr}`);
        const running = await operatorProcesses(box);
        return running.length > 0
          ? { done: true, value: undefined }
          : { done: false, reason: "no operator process yet" };
      },
      { description: "an operator process of the run", timeoutMs: 120_000, intervalMs: 20 },
    );
    const started = await killRun(box, name, kit);
    const kinds = (await findLeftovers(box.environment)).map((l) => [l.kind, l.ownerPid]);
    expect(kinds).toContainEqual(["operator", kit.pid]);
    expect(kinds).toContainEqual(["kwok-cluster", kit.pid]);

    const cleaned = await cleanByCli(box);

    expect(cleaned.code, cleaned.stdout + cleaned.stderr).toBe(0);
    expect(cleaned.stdout).toContain(`removed kwok cluster ${name}`);
    expect(cleaned.stdout).toMatch(
      /removed operator process group \d+ \(\S*webapp-operator --leader-elect=false/,
    );
    await expectNothingLeft(box, started);
  }, 240_000);

  it("removes everything of a run killed in the middle of a scenario", async () => {
    const box = await sandbox();
    const { name, kit } = await startDriftRun(box, "rc-clean-scenario");

    // A drift scenario under way: its step was announced (the reference's operator is done by
    // then) and the scenario's own operator runs.
    await pollUntil(
      async () => {
        if (kit.child.exitCode !== null) throw new Error(`the run ended early: ${kit.output.stderr}`);
        if (!/\] {3}(perturbing|deleting) /.test(kit.output.stderr)) {
          return { done: false, reason: "no drift scenario announced yet" };
        }
        return (await operatorProcesses(box)).length > 0
          ? { done: true, value: undefined }
          : { done: false, reason: "the scenario's operator is not running yet" };
      },
      { description: "a drift scenario under way", timeoutMs: 180_000, intervalMs: 20 },
    );
    const started = await killRun(box, name, kit);

    const cleaned = await clean(box);

    expect(cleaned.code, cleaned.stdout + cleaned.stderr).toBe(0);
    expect(cleaned.stdout).toContain(`removed kwok cluster ${name}`);
    expect(cleaned.stdout).toContain("removed operator process group");
    await expectNothingLeft(box, started);
  }, 300_000);
});

describe("clean leaves alone what is not left over", () => {
  it("a cluster whose owner still runs, unless --all", async () => {
    const box = await sandbox();
    const name = clusterName(box, "rc-clean-alive");
    const config = parseClusterConfig({ provider: "kwok", name }, box.environment);
    if (config.provider !== "kwok") throw new Error("expected a kwok config");
    // Started by this process, which stays alive: its owner.
    const provider = new KwokProvider(config, { runner: zxCommandRunner, logger: silentLogger });
    await provider.create();
    const pids = await provider.processIds();
    expect(pids.length).toBeGreaterThan(0);

    const cleaned = await clean(box);

    expect(cleaned).toMatchObject({ code: 0, stdout: "" });
    expect(pids.filter(isProcessAlive)).toEqual(pids);
    expect(await pathExists(provider.clusterDir)).toBe(true);
    expect(await pathExists(provider.recordPath)).toBe(true);

    // This cache is the test's own: --all may take everything in it.
    const all = await clean(box, ["--all"]);

    expect(all.code, all.stdout + all.stderr).toBe(0);
    expect(all.stdout).toContain(
      `removed kwok cluster ${name} (started by pid ${process.pid}, which is still running`,
    );
    await expectNothingLeft(box, pids);
  });

  it("a cluster cluster create handed over, after that kit exited", async () => {
    const box = await sandbox();
    const name = clusterName(box, "rc-clean-kept");
    const kit = startKit(box, ["cluster", "create", "--name", name]);
    const exit = await kit.exited;
    expect(exit.code, kit.output.stderr).toBe(0);
    expect(isProcessAlive(kit.pid)).toBe(false);
    const pids = await pidFilePids(box, name);
    expect(pids.length).toBeGreaterThan(0);

    expect(await findLeftovers(box.environment)).toEqual([]);
    const cleaned = await clean(box);

    expect(cleaned).toMatchObject({ code: 0, stdout: "" });
    expect(pids.filter(isProcessAlive)).toEqual(pids);
    expect(await pathExists(clusterDir(box, name))).toBe(true);

    const deleted = startKit(box, ["cluster", "delete", "--name", name]);
    expect((await deleted.exited).code, deleted.output.stderr).toBe(0);
    await expectNothingLeft(box, pids);
  });
});
