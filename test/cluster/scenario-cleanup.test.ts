import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pollUntil } from "../../src/util/poll.js";
import { runExampleOperator } from "../support/example-run.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import { exampleOperatorBinary } from "../support/webapp-example.js";

// A scenario's cleanup against a real kube-apiserver: the operator stops before the namespace goes,
// so a finalizer it put on the custom resource is left for nobody to release. Unless the kit takes
// it off, the namespace stays Terminating for good with all the resource owns (seen in a kill
// matrix: 227 namespaces stuck with their Deployments and Pods, and every later scenario slower).

let cluster: TestCluster;
let binary: string;

beforeAll(async () => {
  binary = exampleOperatorBinary();
  cluster = await startTestCluster("rc-cleanup");
});

afterAll(async () => {
  cluster?.client.close();
  await cluster?.provider.delete();
});

describe("scenario cleanup", () => {
  it(
    "leaves no custom resource and no namespace behind when the operator's finalizer outlives it",
    { timeout: 300_000 },
    async () => {
      const report = await runExampleOperator(cluster, binary, {
        strict: true,
        suites: ["drift"],
        checks: ["drift/deleted-child"],
      });
      expect(report.checks.map((c) => c.status)).toEqual(["passed"]);
      // The scenario ended with its WebApp in place, carrying the operator's finalizer, and its operator stopped.
      const scenarioNamespaces = async () =>
        (await cluster.client.list("v1", "Namespace")).filter((n) =>
          n.metadata?.name?.startsWith("rc-drift"),
        );
      await pollUntil(
        async () => {
          const webapps = await cluster.client.list("demo.reconcile-conformance.dev/v1alpha1", "WebApp");
          const namespaces = await scenarioNamespaces();
          return webapps.length === 0 && namespaces.length === 0
            ? { done: true, value: undefined }
            : {
                done: false,
                reason: `${webapps.length} WebApp(s) left (finalizers ${JSON.stringify(webapps.map((w) => w.metadata?.finalizers))}), ${namespaces.length} namespace(s)`,
              };
        },
        { description: "the scenario's namespace to be gone", timeoutMs: 90_000, intervalMs: 500 },
      );
    },
  );
});
