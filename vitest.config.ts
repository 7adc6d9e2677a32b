import { defineConfig } from "vitest/config";

// Three projects: `unit` is pure logic and runs anywhere; `process` starts
// real processes or built tools (process groups, ps, actionlint) but no
// cluster; `cluster` starts real kwok clusters (kube-apiserver, etcd,
// controllers) and needs the binaries from hack/kube-binaries/build.sh.
// Cluster tests share a 2-core machine, so their files run one at a time.
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
    ],
  },
});
