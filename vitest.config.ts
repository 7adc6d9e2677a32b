import { defineConfig } from "vitest/config";

// Six projects, by cost: `unit` is pure logic and runs anywhere; `process`
// starts real processes or built tools (process groups, ps, actionlint) but no
// cluster; `cluster` starts real kwok clusters (kube-apiserver, etcd,
// controllers) and needs the binaries from hack/kube-binaries/build.sh;
// `matrix` is the kill matrix of the example operators, on kwok clusters of
// its own; `kind` starts kind clusters and needs a Docker engine and a node
// image (hack/kind/); `act` runs the repository's workflows under act, a real
// runner for the Action (hack/act/).
//
// Two workers, so two files run at a time on a 2-core machine (vitest's
// default there is one): most cluster files spend their time waiting on the
// operator and the cluster (the cores were idle half the time with one file
// at a time), so two side by side finish in less time, and their clusters
// and operator ports are picked to coexist (kwok-side-by-side.test.ts). The
// kill matrix already keeps every core busy with its own clusters side by
// side, and kind and act are heavy: scripts/test.sh runs each of those
// projects alone, after the others (`--project matrix`).
export default defineConfig({
  test: {
    maxWorkers: 2,
    projects: [
      {
        test: { name: "unit", include: ["test/unit/**/*.test.ts"] },
      },
      {
        test: { name: "process", include: ["test/process/**/*.test.ts"], testTimeout: 30_000 },
      },
      {
        test: {
          name: "cluster",
          include: ["test/cluster/**/*.test.ts"],
          testTimeout: 120_000,
          // A file's cluster may start beside another file's heaviest moment: one beforeAll that
          // takes 7 s alone took 95 s beside init-then-run (its Go build and its own cluster).
          hookTimeout: 300_000,
        },
      },
      {
        test: {
          name: "matrix",
          include: ["test/matrix/**/*.test.ts"],
          fileParallelism: false,
          hookTimeout: 3_000_000,
        },
      },
      {
        test: {
          name: "kind",
          include: ["test/kind/**/*.test.ts"],
          fileParallelism: false,
          testTimeout: 600_000,
          hookTimeout: 900_000,
        },
      },
      {
        test: {
          name: "act",
          include: ["test/act/**/*.test.ts"],
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 900_000,
        },
      },
    ],
  },
});
