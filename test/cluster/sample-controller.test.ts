import { execFileSync } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/report/report-model.js";
import { runCli } from "../support/run-cli.js";

// `reconcile-conformance run` on k8s.io/sample-controller v0.35.4, the
// Kubernetes project's own example controller, unchanged, as a user would run
// it (the CLI, its own kwok cluster). The verdicts asserted here are the ones
// its code deserves; examples/sample-controller/README.md gives each with the
// line of controller.go that causes it.

const subjectDir = join(import.meta.dirname, "../../examples/sample-controller");

beforeAll(() => {
  // Builds into the cache and links ./upstream (the contract's CRD and sample); instant when built.
  execFileSync("bash", [join(subjectDir, "build.sh")], { stdio: ["ignore", "ignore", "inherit"] });
}, 600_000);

describe("run on k8s.io/sample-controller", () => {
  it("gives the verdicts its code deserves", { timeout: 420_000 }, async () => {
    const reportDir = await mkdtemp(join(tmpdir(), "rc-sample-controller-"));
    const run = await runCli([
      "run",
      "--config",
      join(subjectDir, "reconcile-conformance.yaml"),
      "--cluster",
      "kwok",
      "--report-dir",
      reportDir,
    ]);
    // A MUST check failed: exit 1, not a crash of the kit (2 or 3).
    expect(run.code, run.stderr).toBe(1);
    const report = JSON.parse(await readFile(join(reportDir, "report.json"), "utf8")) as RunReport;
    const check = (id: string) => report.checks.find((c) => c.id === id);
    expect(Object.fromEntries(report.checks.map((c) => [c.id, c.status]))).toEqual({
      "cluster/optimistic-concurrency": "passed",
      "drift/managed-field": "failed",
      "drift/deleted-child": "passed",
      "status-stability/no-avoidable-writes": "passed",
      "status-stability/no-redundant-writes": "warned",
      "status-stability/last-transition-time": "skipped",
      "status-stability/observed-generation": "skipped",
      "status-stability/held-unavailable": "skipped",
      "idempotency/crash-after-create": "passed",
      "idempotency/crash-after-write": "passed",
      "idempotency/preexisting-child": "passed",
      "idempotency/recreate-same-name": "passed",
      "idempotency/no-tick-overwrite": "skipped",
      "conflict/child-update": "failed",
      "conflict/status-update": "passed",
      "staleness/own-create-unseen": "passed",
      "staleness/missed-intermediate-state": "passed",
      "staleness/restart-from-the-past": "passed",
      "differential/update-equals-creation": "failed",
      // Foo has no finalizer: its deletion is the garbage collector's.
      "deletion/crash-during-cleanup": "skipped",
      "deletion/cleanup-retried": "skipped",
      "deletion/no-resurrection": "skipped",
    });

    // controller.go:291-293: replicas is the one field it compares, and it repairs it with an
    // Update of a freshly built Deployment, which replaces the whole object: another writer's
    // annotation and label go with it.
    const drift = check("drift/managed-field")?.scenarios ?? [];
    const replicas = drift.find((s) => s.target === "Deployment/example-foo spec.replicas");
    expect(replicas).toMatchObject({ status: "failed" });
    expect(replicas?.message).toMatch(/^repaired, but another writer's annotation .* erased$/);
    expect(replicas?.evidence?.writes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          write: "update deployments.apps/example-foo",
          effect: "changed",
          fieldManager: "sample-controller",
        }),
      ]),
    );
    // Nothing else of the Deployment is compared: a drifted image stays.
    const image = drift.find(
      (s) => s.target === "Deployment/example-foo spec.template.spec.containers[0].image",
    );
    expect(image).toMatchObject({ status: "failed" });
    expect(image?.message).toMatch(/^not repaired: /);
    expect(drift).toHaveLength(2);

    // controller.go:305/324: every sync ends with UpdateStatus, needed or not; the server finds
    // each a no-op, so only the SHOULD check objects. (One sent from a stale read may meet a real
    // 409 instead: a request that was not needed either.)
    const redundant = check("status-stability/no-redundant-writes")?.scenarios[0];
    expect(redundant?.evidence?.writes?.length).toBeGreaterThan(0);
    for (const write of (redundant?.evidence?.writes ?? []) as { write?: string; effect?: string }[]) {
      expect(write.write).toBe("update foos.samplecontroller.k8s.io/example-foo/status");
      expect(["no-op", "rejected"]).toContain(write.effect);
    }
    // controller.go:267-270: the Deployment is found by its fixed name (spec.deploymentName) before
    // anything is created, so a restart after the create finds and reuses it.
    // A line on the way to an update is named after it ("update 1: ..."); the sample's creation's are not.
    const onCreation = (id: string) =>
      (check(id)?.scenarios ?? []).filter((s) => !/^(generated )?update \d+/.test(s.target));
    const onUpdates = (id: string) =>
      (check(id)?.scenarios ?? []).filter((s) => /^(generated )?update \d+/.test(s.target));
    expect(onCreation("idempotency/crash-after-create").map((s) => s.target)).toEqual([
      "create deployments.apps/example-foo",
    ]);
    expect(onCreation("idempotency/crash-after-write").length).toBeGreaterThan(0);
    // A crash line is named by what the write is (and which occurrence of it), not by its position.
    for (const line of onCreation("idempotency/crash-after-write")) {
      expect(line.target).toMatch(
        /^update foos\.samplecontroller\.k8s\.io\/example-foo\/status( \(\d+(st|nd|rd|th)\))?$/,
      );
    }
    // On the way to each update (updateFaults, by kind): its Deployment update and its status write,
    // each crashed after and restarted; controller.go reads both back, so each ends as the reference.
    expect(onUpdates("idempotency/crash-after-write").map((s) => s.target)).toEqual(
      expect.arrayContaining([
        "update 1: update deployments.apps/example-foo",
        "update 2: update deployments.apps/example-foo",
      ]),
    );
    // controller.go:282-285: a Deployment of that name that it does not control is refused (an
    // event and an error, no status write), so the Foo is never ready over the foreign one.
    expect(check("idempotency/preexisting-child")?.scenarios).toEqual([
      expect.objectContaining({
        target: "Deployment/example-foo",
        status: "passed",
        message: expect.stringMatching(/^never ready while the child differed /) as unknown,
      }),
    ]);
    // controller.go:293 again: after update 1 its Deployment update is a replace of a freshly built
    // object without a resourceVersion, so it goes through on top of another writer's change and
    // erases it (no 409 to react to: "no precondition writes").
    const childConflict = check("conflict/child-update")?.scenarios ?? [];
    expect(childConflict).toEqual([
      expect.objectContaining({
        target: "deployments.apps/example-foo (update)",
        status: "failed",
        message: expect.stringMatching(
          /annotation reconcile-conformance\.dev\/concurrent-write=\w+ is gone/,
        ) as unknown,
      }),
    ]);
    expect(childConflict[0]?.evidence?.notes).toContain("no precondition writes");
    // controller.go:318-324: UpdateStatus sends the Foo it read (with its resourceVersion): the
    // concurrent update 2 makes it a real 409, the sync is retried from the informer's newer Foo,
    // and no status says ready for a generation before its Deployment update.
    const statusConflict = check("conflict/status-update")?.scenarios[0];
    expect(statusConflict?.evidence?.notes?.[0]).toMatch(/answered 409 Conflict$/);
    expect(statusConflict?.message).toMatch(/^the status write got a real 409; /);
    // controller.go:267-277: a Deployment its lister does not show is created, and the create's
    // AlreadyExists is returned as an error, so the Foo is requeued (rate-limited, 234) until the
    // lister has it: a stale view costs refused creates, never a second Deployment or a delete.
    for (const id of ["staleness/own-create-unseen", "staleness/restart-from-the-past"]) {
      const scenario = check(id)?.scenarios[0];
      expect(scenario?.status).toBe("passed");
      expect(scenario?.evidence?.writes).toContainEqual(
        expect.objectContaining({
          write: "create deployments.apps/example-foo",
          code: 409,
          effect: "rejected",
        }),
      );
    }
    expect(check("staleness/restart-from-the-past")?.scenarios[0]?.evidence?.notes).toContainEqual(
      expect.stringMatching(/^list of deployments served from \d+ \(asked: .*\): 200$/),
    );
    // The sync reads the Foo's spec as it is (replicas 3), whatever events came before.
    expect(check("staleness/missed-intermediate-state")?.scenarios[0]?.evidence?.notes?.[0]).toMatch(
      /took 2 .*delivered 1 /,
    );
    // Spec exploration: controller.go:267 looks up only the Deployment the spec names and never
    // deletes one an earlier spec named, so a rename keeps the old Deployment beside the new one; a
    // Foo created without deploymentName never converges (258-263); replicas is what readiness reads.
    expect(report.exploration?.refused).toEqual([
      {
        update: "spec.replicas: removed (was 3)",
        reason:
          "the contract's readiness reads spec.replicas: without it, whether the custom resource is ready could not be told",
      },
    ]);
    expect(
      Object.fromEntries(
        (check("differential/update-equals-creation")?.scenarios ?? []).map((s) => [s.target, s.status]),
      ),
    ).toEqual({
      "update 1": "passed",
      "update 2": "passed",
      'generated update 3 (spec.deploymentName: "example-foo" → "example-foo-updated")': "failed",
      "generated update 4 (spec.replicas: 3 → 4)": "passed",
      'generated update 5 (spec.deploymentName: removed (was "example-foo"))': "skipped",
    });
    expect(
      check("differential/update-equals-creation")?.scenarios.find((s) => s.status === "failed")?.message,
    ).toMatch(/it ended unlike the custom resource updated to it: missing Deployment\/example-foo$/);

    // Foo has neither conditions nor observedGeneration: those checks say so instead of passing.
    expect(check("status-stability/last-transition-time")?.scenarios[0]?.message).toBe(
      "the custom resource reports no conditions",
    );
    expect(check("status-stability/observed-generation")?.scenarios[0]?.message).toBe(
      "the custom resource reports no observedGeneration",
    );
  });
});
