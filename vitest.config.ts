import { defineConfig } from "vitest/config";

// Five projects: `unit` is pure logic and runs anywhere; `process` starts
// real processes or built tools (process groups, ps, actionlint) but no
// cluster; `cluster` starts real kwok clusters (kube-apiserver, etcd,
// controllers) and needs the binaries from hack/kube-binaries/build.sh;
// `kind` starts kind clusters and needs a Docker engine and a node image
// (hack/kind/); `act` runs the repository's workflows under act, a real
// runner for the Action (hack/act/). Cluster tests share a 2-core machine,
// so their files run one at a time; scripts/test.sh runs the kind and act
// projects each on its own, after the others (`--project kind`).
export default defineConfig({
  test: {
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
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 180_000,
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
