import { afterAll, beforeAll, describe, it } from "vitest";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";
import { expectSideBySideAsOneAtATime } from "../support/scenario-parallelism.js";
import { exampleOperatorBinary } from "../support/webapp-example.js";

// Scenarios side by side give the verdicts of scenarios one at a time, on the crash-gap mutant
// (test/support/scenario-parallelism.ts says why it is a file of its own).

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster("rc-parallel-mut");
});

afterAll(async () => {
  cluster?.client.close();
  await cluster?.provider.delete();
});

describe("scenarios side by side give the verdicts of scenarios one at a time", () => {
  it("the crash-gap mutant", { timeout: 600_000 }, async () => {
    await expectSideBySideAsOneAtATime(cluster, exampleOperatorBinary(), "crash-gap");
  });
});
