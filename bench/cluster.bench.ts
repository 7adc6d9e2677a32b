/**
 * kwok cluster lifecycle benchmark: create-to-ready and delete times over
 * several runs, and the control plane's peak memory (summed RSS of etcd,
 * kube-apiserver, kube-controller-manager, kube-scheduler and kwok).
 *
 *   npm run bench:cluster [-- --runs 5]
 *
 * Figures are wall-clock on a shared machine: compare medians from one run.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { KubeClient } from "../src/kube/kube-client.js";
import { uniqueClusterName, kwokProvider } from "../test/support/kwok-cluster.js";

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } });
const runs = Number(values.runs);

/** Resident set size of a process in MiB, 0 when it is gone. */
function rssMiB(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

function stats(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? NaN;
  return { median, min: sorted[0] ?? NaN, max: sorted.at(-1) ?? NaN };
}

const fmt = (s: { median: number; min: number; max: number }, unit: string, digits = 2) =>
  `median ${s.median.toFixed(digits)} ${unit} (min ${s.min.toFixed(digits)}, max ${s.max.toFixed(digits)})`;

const createSeconds: number[] = [];
const deleteSeconds: number[] = [];
const peakMiB: number[] = [];

for (let run = 1; run <= runs; run++) {
  const provider = kwokProvider(uniqueClusterName("rc-bench"));
  let peak = 0;
  const sample = async () => {
    const total = (await provider.processIds()).reduce((sum, pid) => sum + rssMiB(pid), 0);
    peak = Math.max(peak, total);
  };
  const sampler = setInterval(() => void sample(), 100);

  const t0 = performance.now();
  const access = await provider.create();
  const created = (performance.now() - t0) / 1000;

  // Some work so memory reflects a used cluster, not an idle one: a round of
  // writes and a Deployment to schedule, observed for three seconds.
  const client = KubeClient.fromKubeconfig(access.kubeconfigPath, access.context);
  for (let i = 0; i < 50; i++) {
    await client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `cm-${i}`, namespace: "default" },
      data: { i: String(i) },
    });
  }
  await client.create({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "bench", namespace: "default" },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: "bench" } },
      template: {
        metadata: { labels: { app: "bench" } },
        spec: { containers: [{ name: "c", image: "example.invalid/x" }] },
      },
    },
  });
  client.close();
  const observeUntil = Date.now() + 3000;
  while (Date.now() < observeUntil) await sample();
  clearInterval(sampler);

  const t1 = performance.now();
  await provider.delete();
  const deleted = (performance.now() - t1) / 1000;

  createSeconds.push(created);
  deleteSeconds.push(deleted);
  peakMiB.push(peak);
  console.log(
    `run ${run}/${runs}: ready in ${created.toFixed(2)} s, deleted in ${deleted.toFixed(2)} s, peak RSS ${peak.toFixed(0)} MiB`,
  );
}

console.log("");
console.log(`kwok cluster create -> ready: ${fmt(stats(createSeconds), "s")}  [budget <= 15 s]`);
console.log(`kwok cluster delete:          ${fmt(stats(deleteSeconds), "s")}`);
console.log(`control plane peak RSS:       ${fmt(stats(peakMiB), "MiB", 0)}`);
