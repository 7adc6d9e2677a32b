/**
 * API proxy overhead: latency of GETs through the proxy against the same GETs
 * sent directly (interleaved, in one run), how much later a watch event
 * arrives through the proxy than directly, and the cost of writes: a write
 * with a precondition is forwarded as it is; one without gets a read of the
 * prior state and the proxy's own precondition (one extra round trip, more
 * when another writer wins in between and the proxy retries); one that
 * changes the object also gets a read of which fields it changed.
 *
 *   npm run bench:proxy [-- --requests 2000 --events 200 --writes 500]
 *
 * Target (docs/design/architecture.md, "Budgets"): median added latency <= 1 ms per request.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { KubeClient } from "../src/kube/kube-client.js";
import { ApiProxy } from "../src/proxy/api-proxy.js";
import { startTestCluster } from "../test/support/kwok-cluster.js";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "2000" },
    events: { type: "string", default: "200" },
    writes: { type: "string", default: "500" },
  },
});
const requests = Number(values.requests);
const events = Number(values.events);
const writes = Number(values.writes);

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}
const ms = (n: number) => `${n.toFixed(3)} ms`;

const cluster = await startTestCluster("rc-bench-proxy");
const proxy = await ApiProxy.start({
  upstream: { kubeconfigPath: cluster.access.kubeconfigPath, context: cluster.access.context },
});
try {
  const workDir = await mkdtemp(join(tmpdir(), "rc-bench-"));
  const viaProxy = KubeClient.fromKubeconfig(await proxy.writeKubeconfig(join(workDir, "kubeconfig")));
  const direct = cluster.client;
  const ref = { apiVersion: "v1", kind: "ConfigMap", name: "bench", namespace: "default" };
  await direct.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "bench", namespace: "default" },
    data: { v: "0" },
  });

  for (let i = 0; i < 100; i++) {
    await direct.get(ref);
    await viaProxy.get(ref);
  }
  /** Runs `action` on both sides, interleaved so that machine noise hits both alike; sorted times. */
  async function interleaved(count: number, action: (client: KubeClient) => Promise<unknown>) {
    const times = { direct: [] as number[], proxy: [] as number[] };
    for (let i = 0; i < count; i++) {
      const order = i % 2 === 0 ? (["direct", "proxy"] as const) : (["proxy", "direct"] as const);
      for (const side of order) {
        const t0 = performance.now();
        await action(side === "direct" ? direct : viaProxy);
        times[side].push(performance.now() - t0);
      }
    }
    times.direct.sort((a, b) => a - b);
    times.proxy.sort((a, b) => a - b);
    return times;
  }
  const gets = await interleaved(requests, (client) => client.get(ref));
  const directTimes = gets.direct;
  const proxyTimes = gets.proxy;
  const directMedian = quantile(directTimes, 0.5);
  const proxyMedian = quantile(proxyTimes, 0.5);

  // Writes: no-op merge patches (no precondition) and no-op updates with one.
  const patch = () => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "bench", namespace: "default" },
    data: { v: "0" },
  });
  const logBefore = proxy.writeLog.lastSeq;
  const unconditional = await interleaved(writes, (client) => client.patch(patch(), { type: "merge" }));
  const unconditionalLog = proxy.writeLog.query({ after: logBefore, actor: "operator" });
  const current = await direct.get(ref);
  const conditional = await interleaved(writes, (client) => client.replace(current));
  // Writes that change the object, with a precondition: the proxy also reads which fields each
  // changed (the stored object at the precondition's resourceVersion; the answer is the one after).
  let resourceVersion = current.metadata?.resourceVersion;
  let change = 0;
  const changedBefore = proxy.writeLog.lastSeq;
  const changing = await interleaved(writes, async (client) => {
    change += 1;
    const answer = await client.patch(
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "bench", namespace: "default", resourceVersion },
        data: { v: `changed-${change}` },
      },
      { type: "merge" },
    );
    resourceVersion = answer.metadata?.resourceVersion;
  });
  const changingLog = proxy.writeLog.query({ after: changedBefore, actor: "operator" });

  // Watch delivery: the same events on a direct watch and a watch through the proxy.
  const arrivals = { direct: new Map<string, number>(), proxy: new Map<string, number>() };
  const listed = await direct.listWithVersion("v1", "ConfigMap", { namespace: "default" });
  const target = { apiVersion: "v1", kind: "ConfigMap", namespace: "default" };
  const watches = await Promise.all(
    (["direct", "proxy"] as const).map((side) =>
      (side === "direct" ? direct : viaProxy).watch(
        target,
        (type, object) => {
          if (object.metadata?.name === "bench")
            arrivals[side].set(object.metadata.resourceVersion ?? "", performance.now());
        },
        { resourceVersion: listed.resourceVersion },
      ),
    ),
  );
  for (let i = 1; i <= events; i++) {
    await direct.patch({
      ...{ apiVersion: "v1", kind: "ConfigMap" },
      metadata: { name: "bench", namespace: "default" },
      data: { v: String(i) },
    });
  }
  const deadline = Date.now() + 10_000;
  while ((arrivals.direct.size < events || arrivals.proxy.size < events) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  for (const w of watches) w.stop();
  const delays = [...arrivals.proxy].flatMap(([rv, at]) => {
    const directAt = arrivals.direct.get(rv);
    return directAt === undefined ? [] : [at - directAt];
  });
  delays.sort((a, b) => a - b);
  viaProxy.close();

  console.log(`GET latency over ${requests} requests each (interleaved):`);
  console.log(`  direct: median ${ms(directMedian)}, p90 ${ms(quantile(directTimes, 0.9))}`);
  console.log(`  proxy:  median ${ms(proxyMedian)}, p90 ${ms(quantile(proxyTimes, 0.9))}`);
  console.log(
    `  added at the median: ${ms(proxyMedian - directMedian)} (ratio ${(proxyMedian / directMedian).toFixed(2)})  [budget <= 1 ms]`,
  );
  const attempts = unconditionalLog.map((e) => e.proxyPrecondition?.attempts ?? 0);
  const effects = new Map<string, number>();
  for (const e of unconditionalLog) effects.set(e.effect, (effects.get(e.effect) ?? 0) + 1);
  console.log(`writes, ${writes} each way (interleaved):`);
  for (const [name, times] of [
    ["merge patch without a precondition", unconditional],
    ["update with a precondition        ", conditional],
    ["patch that changes, precondition  ", changing],
  ] as const) {
    const added = quantile(times.proxy, 0.5) - quantile(times.direct, 0.5);
    console.log(
      `  ${name}: direct median ${ms(quantile(times.direct, 0.5))}, proxy ${ms(quantile(times.proxy, 0.5))}, added ${ms(added)}`,
    );
  }
  console.log(
    `  unconditional writes: ${attempts.filter((a) => a === 1).length} sent once, ${attempts.filter((a) => a > 1).length} retried, ` +
      `${attempts.filter((a) => a === 0).length} unconditioned; extra upstream round trips per write ` +
      `${(attempts.reduce((sum, a) => sum + 1 + Math.max(0, a - 1) * 2, 0) / Math.max(1, attempts.length)).toFixed(2)}; ` +
      `effects ${[...effects].map(([k, v]) => `${k} ${v}`).join(", ")}`,
  );
  const named = changingLog.filter((e) => e.effect === "changed" && e.changedPaths !== undefined);
  console.log(
    `  changing writes through the proxy: ${changingLog.length}, ${named.length} with their changed fields named (${[...new Set(named.map((e) => e.changedPaths?.join(",")))].join("; ")})`,
  );
  console.log(
    `watch events through the proxy vs direct (${delays.length} of ${events} events seen on both):`,
  );
  console.log(
    `  extra delay: median ${ms(quantile(delays, 0.5))}, p90 ${ms(quantile(delays, 0.9))}, max ${ms(delays.at(-1) ?? NaN)}`,
  );
} finally {
  await proxy.close();
  cluster.client.close();
  await cluster.provider.delete();
}
