import { afterEach, describe, expect, it } from "vitest";
import { AbortedError, UsageError } from "../../src/errors.js";
import { isProcessAlive } from "../../src/process/process-table.js";
import { pathExists } from "../../src/util/files.js";
import { pollUntil } from "../../src/util/poll.js";
import { kwokProvider, uniqueClusterName } from "../support/kwok-cluster.js";
import type { KwokProvider } from "../../src/cluster/kwok-provider.js";

const started: KwokProvider[] = [];
afterEach(async () => {
  // Whatever a failed assertion left running goes away before the next test.
  for (const provider of started.splice(0)) await provider.delete().catch(() => {});
});

describe("kwok provider lifecycle", () => {
  it("stops every process it started when create is aborted midway", async () => {
    const provider = kwokProvider(uniqueClusterName("rc-abort"));
    started.push(provider);
    const controller = new AbortController();
    const creating = provider.create({ signal: controller.signal });
    const outcome = creating.then(
      () => "created",
      (error: unknown) => error,
    );

    // Abort as soon as some control-plane process exists, i.e. while kwokctl is still bringing it up.
    const seen = new Set<number>();
    await pollUntil(
      async () => {
        for (const pid of await provider.processIds()) seen.add(pid);
        return seen.size > 0
          ? { done: true, value: undefined }
          : { done: false, reason: "no process started yet" };
      },
      { description: "the first control-plane process", timeoutMs: 30_000, intervalMs: 10 },
    );
    controller.abort();
    const result = await outcome;

    expect(result).toBeInstanceOf(AbortedError);
    for (const pid of await provider.processIds()) seen.add(pid);
    expect(seen.size).toBeGreaterThan(0);
    expect([...seen].filter(isProcessAlive)).toEqual([]);
    expect(await pathExists(provider.clusterDir)).toBe(false);
  });

  it("refuses to create a cluster whose name is taken, and leaves the running one alone", async () => {
    const name = uniqueClusterName("rc-twice");
    const first = kwokProvider(name);
    started.push(first);
    await first.create();
    const pids = await first.processIds();

    await expect(kwokProvider(name).create()).rejects.toBeInstanceOf(UsageError);
    expect(pids.filter(isProcessAlive)).toEqual(pids);

    await first.delete();
    expect(pids.filter(isProcessAlive)).toEqual([]);
  });
});
