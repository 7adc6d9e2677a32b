import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ownerState, type ProcessProbe } from "../../src/cleanup/ownership.js";
import {
  chooseProcessTableSource,
  comparableStartTimes,
  PROCESS_TABLE_ENV,
} from "../../src/process/process-table.js";
import {
  hasEnvironmentEntry,
  parsePsOutput,
  psArguments,
  psCommand,
  psDialect,
  psEnvironment,
  psTable,
  type PsRun,
} from "../../src/process/ps-table.js";

// The ps source of the process table (src/process/ps-table.ts) without running ps: its
// arguments, its environment, and the parsing of outputs of both ps implementations. The
// procps lines were recorded on Linux (procps-ng 4.0.2); the macOS ones are written after
// adv_cmds' ps (print.c, keyword.c: PIDLEN 5, stat left-justified in 4 columns, lstart
// strftime("%c") left-justified in 28, a zombie's command "<defunct>", an unreadable one's
// "(comm)", -E's environment after the arguments), since no Mac is at hand to record them.
// process-table-ps.test.ts runs the ps source against real processes.

const PROCPS = [
  "    1     0     0 S<Ll Sun Nov 29 19:37:10 2026 /process_api --firecracker-init --addr 0.0.0.0:2024",
  "    2     0     0 S    Sun Nov 29 19:37:10 2026 [kthreadd]",
  "21819 21818 21819 Ss   Mon Nov 30 14:37:06 2026 bash /dev/fd/3",
  "23661 23620 23584 Z    Mon Nov 30 14:39:18 2026 [python3] <defunct>",
  "23678     1 23545 S    Mon Nov  2 09:05:01 2026 sh -c sleep 30 /tmp/é x",
  "",
].join("\n");

const MACOS = [
  "    1     0     1 Ss   Mon Nov  2 09:05:01 2026     /sbin/launchd",
  " 4242  4100  4242 Ss   Tue Nov 10 14:37:22 2026     /bin/sh -c sleep 600 & wait",
  " 4243  4242  4242 S    Tue Nov 10 14:37:22 2026     sleep 600",
  " 4250  4242  4242 Z    Tue Nov 10 14:37:23 2026     <defunct>",
  " 4260     1  4260 S    Tue Nov 10 14:37:24 2026     (kube-apiserver)",
  " 4300  4100  4300 S+   Tue Nov 10 14:38:00 2026     /Users/me/Library/Application Support/rc/kube/etcd --data-dir /Users/me/Library/Application Support/rc/kwok/clusters/rc-1/etcd",
  "",
].join("\n");

const RECORD = "RECONCILE_CONFORMANCE_RECORD=/Users/me/Library/Application Support/rc/operators/0011.json";

/** What `ps -ww -E -o … -A` prints on macOS: each own process's environment after its arguments. */
const MACOS_ENVIRONMENT = [
  "    1     0     1 Ss   Mon Nov  2 09:05:01 2026     /sbin/launchd",
  ` 4242  4100  4242 Ss   Tue Nov 10 14:37:22 2026     /bin/sh -c sleep 600 & wait ${RECORD} PATH=/usr/bin:/bin HOME=/Users/me`,
  ` 4243  4242  4242 S    Tue Nov 10 14:37:22 2026     sleep 600 ${RECORD} PATH=/usr/bin:/bin HOME=/Users/me`,
  ` 4250  4242  4242 Z    Tue Nov 10 14:37:23 2026     <defunct>`,
  ` 4251  4100  4251 S    Tue Nov 10 14:37:23 2026     sleep 601 ${RECORD}.tmp PATH=/usr/bin:/bin`,
  ` 4299  4100  4299 R    Tue Nov 10 14:38:01 2026     /bin/ps -ww -o pid=,ppid=,pgid=,stat=,lstart=,command= -E -A PATH=/usr/bin:/bin TZ=UTC0 LC_TIME=C LC_CTYPE=UTF-8`,
  "",
].join("\n");

describe("ps output", () => {
  it("parses procps lines: kernel threads, flags after the state, a zombie, a padded day, spaces and UTF-8 in the command", () => {
    expect(parsePsOutput(PROCPS)).toEqual([
      {
        pid: 1,
        ppid: 0,
        pgid: 0,
        stat: "S<Ll",
        startTime: "2026-11-29T19:37:10Z",
        command: "/process_api --firecracker-init --addr 0.0.0.0:2024",
      },
      { pid: 2, ppid: 0, pgid: 0, stat: "S", startTime: "2026-11-29T19:37:10Z", command: "[kthreadd]" },
      {
        pid: 21819,
        ppid: 21818,
        pgid: 21819,
        stat: "Ss",
        startTime: "2026-11-30T14:37:06Z",
        command: "bash /dev/fd/3",
      },
      {
        pid: 23661,
        ppid: 23620,
        pgid: 23584,
        stat: "Z",
        startTime: "2026-11-30T14:39:18Z",
        command: "[python3] <defunct>",
      },
      {
        pid: 23678,
        ppid: 1,
        pgid: 23545,
        stat: "S",
        startTime: "2026-11-02T09:05:01Z",
        command: "sh -c sleep 30 /tmp/é x",
      },
    ]);
  });

  it("parses macOS lines: lstart padded to 28 columns, <defunct>, (comm), spaces in paths", () => {
    const parsed = parsePsOutput(MACOS);
    expect(parsed.map((p) => [p.pid, p.ppid, p.pgid, p.stat, p.startTime])).toEqual([
      [1, 0, 1, "Ss", "2026-11-02T09:05:01Z"],
      [4242, 4100, 4242, "Ss", "2026-11-10T14:37:22Z"],
      [4243, 4242, 4242, "S", "2026-11-10T14:37:22Z"],
      [4250, 4242, 4242, "Z", "2026-11-10T14:37:23Z"],
      [4260, 1, 4260, "S", "2026-11-10T14:37:24Z"],
      [4300, 4100, 4300, "S+", "2026-11-10T14:38:00Z"],
    ]);
    expect(parsed.map((p) => p.command)).toEqual([
      "/sbin/launchd",
      "/bin/sh -c sleep 600 & wait",
      "sleep 600",
      "<defunct>",
      "(kube-apiserver)",
      "/Users/me/Library/Application Support/rc/kube/etcd --data-dir /Users/me/Library/Application Support/rc/kwok/clusters/rc-1/etcd",
    ]);
  });

  it("skips what is not a process line: a header, warnings, a date that is not one", () => {
    const text = [
      "  PID  PPID  PGID STAT STARTED                  COMMAND",
      "ps: warning: something",
      "   10     1    10 S    Mon Foo  2 09:05:01 2026 bad month",
      "   11     1    11 S    Mon Feb 31 09:05:01 2026 no such day",
      "   12     1    12 S    Mon Feb 28 09:05:01 2026",
    ].join("\n");
    expect(parsePsOutput(text)).toEqual([
      { pid: 12, ppid: 1, pgid: 12, stat: "S", startTime: "2026-02-28T09:05:01Z", command: "" },
    ]);
  });
});

describe("ps arguments and environment", () => {
  it("lists every process or one pid, with the environment by -E on macOS and e on procps", () => {
    const columns = ["-ww", "-o", "pid=,ppid=,pgid=,stat=,lstart=,command="];
    expect(psArguments("macos")).toEqual([...columns, "-A"]);
    expect(psArguments("procps")).toEqual([...columns, "-A"]);
    expect(psArguments("macos", { pid: 42 })).toEqual([...columns, "-p", "42"]);
    expect(psArguments("macos", { environment: true })).toEqual([...columns, "-E", "-A"]);
    expect(psArguments("procps", { environment: true })).toEqual([...columns, "e", "-A"]);
  });

  it("runs macOS's own ps, and procps's from PATH", () => {
    expect(psDialect("darwin")).toBe("macos");
    expect(psDialect("linux")).toBe("procps");
    expect(psCommand("macos")).toBe("/bin/ps");
    expect(psCommand("procps")).toBe("ps");
  });

  it("gives ps UTC, C times, UTF-8 characters and nothing else of the caller's environment", () => {
    const parent = { PATH: "/opt/bin:/usr/bin", TZ: "Europe/Paris", LC_ALL: "fr_FR.UTF-8", SECRET: "x" };
    expect(psEnvironment("macos", parent)).toEqual({
      PATH: "/opt/bin:/usr/bin",
      TZ: "UTC0",
      LC_TIME: "C",
      LC_CTYPE: "UTF-8",
    });
    expect(psEnvironment("procps", parent)).toEqual({
      PATH: "/opt/bin:/usr/bin",
      TZ: "UTC0",
      LC_TIME: "C",
      LC_CTYPE: "C.UTF-8",
    });
  });
});

describe("environment entries in an environment listing", () => {
  const entry = "RC_MARK=/a b/owner.json";
  it("finds the entry whole, between spaces or at the end, after the command", () => {
    expect(hasEnvironmentEntry(`sleep 600 ${entry} HOME=/root`, entry)).toBe(true);
    expect(hasEnvironmentEntry(`sleep 600 HOME=/root ${entry}`, entry)).toBe(true);
  });
  it("does not take a longer value, a longer name or the command itself for it", () => {
    expect(hasEnvironmentEntry(`sleep 600 ${entry}.tmp HOME=/root`, entry)).toBe(false);
    expect(hasEnvironmentEntry(`sleep 600 X${entry} HOME=/root`, entry)).toBe(false);
    expect(hasEnvironmentEntry(entry, entry)).toBe(false);
    expect(hasEnvironmentEntry("sleep 600 RC_MARK=/a", entry)).toBe(false);
  });
});

/** A ps that prints `outputs` (by whether the environment was asked for) and records its arguments. */
function recordedPs(outputs: { plain: string; environment?: string; one?: string }, psPid?: number) {
  const calls: string[][] = [];
  const run = (args: readonly string[]): PsRun => {
    calls.push([...args]);
    const text = args.includes("-p")
      ? (outputs.one ?? "")
      : args.includes("-E")
        ? (outputs.environment ?? "")
        : outputs.plain;
    return psPid === undefined ? { stdout: text } : { stdout: text, pid: psPid };
  };
  return { calls, run };
}

describe("the ps process table on macOS, from recorded output", () => {
  it("finds a group's live members: not its zombie", () => {
    const ps = recordedPs({ plain: MACOS });
    const table = psTable({ dialect: "macos", run: ps.run });
    expect(table.groupMembers(4242)).toEqual([4242, 4243]);
    expect(ps.calls).toEqual([psArguments("macos")]);
  });

  it("finds processes by an environment entry with -E, not by a longer value, and not ps itself", () => {
    const ps = recordedPs({ plain: MACOS, environment: MACOS_ENVIRONMENT }, 4299);
    const table = psTable({ dialect: "macos", run: ps.run });
    expect(table.findByEnvironment(RECORD)).toEqual([4242, 4243]);
    expect(table.findByEnvironment("LC_CTYPE=UTF-8")).toEqual([]);
    expect(ps.calls[0]).toEqual(psArguments("macos", { environment: true }));
  });

  it("finds processes by an argument with spaces, without the environment", () => {
    const ps = recordedPs({ plain: MACOS, environment: MACOS_ENVIRONMENT });
    const table = psTable({ dialect: "macos", run: ps.run });
    expect(table.findByArgument("/Application Support/rc/kwok/clusters/rc-1/")).toEqual([4300]);
    expect(table.findByArgument("RECONCILE_CONFORMANCE_RECORD=")).toEqual([]);
  });

  it("reads one pid's state, start time and command with -p; nothing for a pid ps does not list", () => {
    const zombie = " 4250  4242  4242 Z    Tue Nov 10 14:37:23 2026     <defunct>\n";
    const ps = recordedPs({ plain: "", one: zombie });
    const table = psTable({ dialect: "macos", run: ps.run });
    expect(table.state(4250)).toBe("Z");
    expect(table.startTime(4250)).toBe("2026-11-10T14:37:23Z");
    expect(table.commandLine(4250)).toBe("<defunct>");
    expect(table.startTime(4251)).toBeUndefined();
    expect(ps.calls[0]).toEqual(psArguments("macos", { pid: 4250 }));
  });
});

describe("the ps process table, liveness", () => {
  it("takes a pid that answers the signal but that ps no longer lists (a zombie reaped meanwhile) for gone", () => {
    const ps = recordedPs({ plain: "", one: "" });
    expect(psTable({ dialect: "macos", run: ps.run }).isAlive(process.pid)).toBe(false);
    expect(ps.calls).toEqual([psArguments("macos", { pid: process.pid })]);
  });

  it("does not run ps for a pid no process has", () => {
    const ps = recordedPs({ plain: "" });
    const gone = spawnSync(process.execPath, ["-e", ""]).pid ?? 0;
    expect(psTable({ dialect: "macos", run: ps.run }).isAlive(gone)).toBe(false);
    expect(ps.calls).toEqual([]);
  });
});

describe("choosing the source", () => {
  it("takes /proc where it exists and ps elsewhere, unless told", () => {
    expect(chooseProcessTableSource(undefined, true)).toBe("proc");
    expect(chooseProcessTableSource(undefined, false)).toBe("ps");
    expect(chooseProcessTableSource("", true)).toBe("proc");
    expect(chooseProcessTableSource("ps", true)).toBe("ps");
    expect(chooseProcessTableSource("proc", false)).toBe("proc");
    expect(() => chooseProcessTableSource("sysctl", true)).toThrow(
      `${PROCESS_TABLE_ENV}=sysctl: expected "proc" or "ps"`,
    );
  });

  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it(`reads ${PROCESS_TABLE_ENV} once, at the first question`, async () => {
    vi.resetModules();
    vi.stubEnv(PROCESS_TABLE_ENV, "ps");
    const table = await import("../../src/process/process-table.js");
    expect(table.processTableSource()).toBe("ps");
    expect(table.isProcessAlive(process.pid)).toBe(true);
    vi.stubEnv(PROCESS_TABLE_ENV, "proc");
    expect(table.processTableSource()).toBe("ps");
  });

  it(`refuses a ${PROCESS_TABLE_ENV} it does not know, naming it`, async () => {
    vi.resetModules();
    vi.stubEnv(PROCESS_TABLE_ENV, "sysctl");
    const table = await import("../../src/process/process-table.js");
    expect(() => table.isProcessAlive(process.pid)).toThrow(PROCESS_TABLE_ENV);
  });
});

describe("start times of two sources", () => {
  const probe = (startTime: string): ProcessProbe => ({
    hostname: () => hostname(),
    isAlive: () => true,
    startTime: () => startTime,
  });
  const owner = (startTime: string) => ({ pid: 4242, hostname: hostname(), startTime });

  it("compares /proc's with /proc's and ps's with ps's", () => {
    expect(comparableStartTimes("123456", "123457")).toBe(true);
    expect(comparableStartTimes("2026-11-10T14:37:22Z", "2026-11-10T14:37:23Z")).toBe(true);
    expect(comparableStartTimes("123456", "2026-11-10T14:37:22Z")).toBe(false);
  });

  it("judges a reused pid by a start time of the same source, and takes a live pid for its owner across sources", () => {
    expect(ownerState(owner("2026-11-10T14:37:22Z"), probe("2026-11-10T14:37:22Z"))).toBe("running");
    expect(ownerState(owner("2026-11-10T14:37:22Z"), probe("2026-11-10T14:40:00Z"))).toBe("gone");
    expect(ownerState(owner("123456"), probe("123999"))).toBe("gone");
    expect(ownerState(owner("123456"), probe("2026-11-10T14:37:22Z"))).toBe("running");
  });
});
