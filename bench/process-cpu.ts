/**
 * CPU seconds of the cluster's processes over one measured run, read from
 * /proc (Linux only): every process whose command is one of `commands`
 * (kube-apiserver, etcd, ...) and that started after the sampler, sampled
 * every half second so that a process gone before the end (the cluster is
 * deleted by the run) still counts up to its last sample. The kit's own CPU
 * is process.cpuUsage(), read by the caller.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on every Linux the kit runs on). */
const TICKS_PER_SECOND = 100;

interface Stat {
  readonly command: string;
  readonly startTicks: number;
  readonly cpuTicks: number;
}

function readStat(pid: string): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command is in parentheses and may hold spaces; the fields after it are space-separated.
    const open = text.indexOf("(");
    const close = text.lastIndexOf(")");
    const fields = text.slice(close + 2).split(" ");
    // After the command: state is field 3, utime 14, stime 15, starttime 22 (1-based, man proc).
    return {
      command: text.slice(open + 1, close),
      cpuTicks: Number(fields[11]) + Number(fields[12]),
      startTicks: Number(fields[19]),
    };
  } catch {
    return undefined; // gone between the listing and the read
  }
}

function uptimeTicks(): number {
  return Math.floor(Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]) * TICKS_PER_SECOND);
}

export class ProcessCpuSampler {
  private readonly startedTicks = uptimeTicks();
  private readonly lastTicks = new Map<string, { command: string; cpuTicks: number }>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly commands: readonly string[]) {
    this.timer = setInterval(() => this.sample(), 500);
    this.timer.unref();
  }

  private sample(): void {
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid)) continue;
      const stat = readStat(pid);
      if (!stat || !this.commands.includes(stat.command) || stat.startTicks < this.startedTicks) continue;
      this.lastTicks.set(pid, { command: stat.command, cpuTicks: stat.cpuTicks });
    }
  }

  /** Stops sampling; CPU seconds by command, over the processes seen. */
  stop(): Map<string, number> {
    this.sample();
    clearInterval(this.timer);
    const seconds = new Map<string, number>(this.commands.map((c) => [c, 0]));
    for (const { command, cpuTicks } of this.lastTicks.values()) {
      seconds.set(command, (seconds.get(command) ?? 0) + cpuTicks / TICKS_PER_SECOND);
    }
    return seconds;
  }
}
