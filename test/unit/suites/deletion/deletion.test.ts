import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { loadContract } from "../../../../src/contract/load-contract.js";
import type { WriteEntry } from "../../../../src/proxy/write-log.js";
import type { SpecReference } from "../../../../src/scenario/spec-references.js";
import { cleanupRetried } from "../../../../src/suites/deletion/cleanup-retried.js";
import { crashDuringCleanup } from "../../../../src/suites/deletion/crash-during-cleanup.js";
import {
  createsAfterTheDelete,
  deletionProblems,
  deletionReference,
  type DeletionEnd,
} from "../../../../src/suites/deletion/deletion-end.js";
import {
  noResurrection,
  type ResurrectionObservation,
} from "../../../../src/suites/deletion/no-resurrection.js";
import { writeEntry } from "../../../support/write-entry.js";

const contract = await loadContract("examples/webapp-operator/reconcile-conformance.yaml");
const UID = "0a1b2c3d-0000-4000-8000-00000000abcd";

const cleanupDelete = (fields: Partial<WriteEntry> = {}) =>
  writeEntry({
    seq: 10,
    verb: "delete",
    group: "",
    resource: "configmaps",
    name: `directory-${UID}`,
    effect: "deleted",
    uid: "e1",
    ...fields,
  });
const release = (fields: Partial<WriteEntry> = {}) =>
  writeEntry({
    seq: 11,
    group: "demo.reconcile-conformance.dev",
    resource: "webapps",
    name: "hello",
    effect: "deleted",
    ...fields,
  });

const end = (fields: Partial<DeletionEnd> = {}): DeletionEnd => ({
  deleteSeq: 9,
  writes: [cleanupDelete(), release()],
  leftovers: [],
  operatorLog: [],
  ...fields,
});

function reference(deletion?: SpecReference["deletion"]): Map<number, SpecReference> {
  const zero: SpecReference = {
    spec: 0,
    namespace: "ns",
    customResource: {},
    children: [],
    writes: [],
    specWrites: [],
    ...(deletion ? { deletion } : {}),
  };
  return new Map([[0, zero]]);
}

describe("deletionReference", () => {
  it("skips an operator with no finalizer of its own, saying why", () => {
    const found = deletionReference({ contract, references: reference() });
    expect(found).toMatchObject({ target: "deletion" });
    expect((found as { skip: string }).skip).toContain("no finalizer of the operator's");
  });

  it("takes what the reference's cleanup deleted (not the custom resource) by role", () => {
    const found = deletionReference({
      contract,
      references: reference({
        finalizers: ["demo.reconcile-conformance.dev/directory"],
        deleteSeq: 9,
        writes: [cleanupDelete(), release()],
      }),
    });
    expect(found).toMatchObject({ cleanup: ["configmaps/directory-<uid>"] });
  });
});

describe("deletionProblems", () => {
  it.each<[string, Partial<DeletionEnd>, string[]]>([
    ["a deletion that ended as the reference's", {}, []],
    [
      "a custom resource never released",
      { stuck: "the custom resource is still there with finalizers f 60 s after the delete" },
      [
        "the custom resource was not deleted: the custom resource is still there with finalizers f 60 s after the delete",
      ],
    ],
    [
      "a record left behind",
      { leftovers: [`ConfigMap/directory-${UID}`] },
      [`the cleanup left ConfigMap/directory-${UID} behind (the reference's cleanup deletes it)`],
    ],
    [
      "a create after the delete from a view with the deletion, and the same name deleted as two objects",
      {
        versionsBeforeDelete: ["100"],
        writes: [
          cleanupDelete(),
          release({ seq: 11, sentResourceVersion: "101", effect: "changed" }),
          writeEntry({
            seq: 12,
            verb: "create",
            group: "",
            resource: "configmaps",
            name: `directory-${UID}`,
            effect: "created",
          }),
          cleanupDelete({ seq: 13, uid: "e2" }),
          release({ seq: 14 }),
        ],
      },
      [
        `it created configmaps/directory-${UID} (write 12) after the deletion began`,
        `it deleted configmaps/directory-${UID} 2 times, each a different object (uids e1, e2)`,
      ],
    ],
    [
      "a status write after the delete is no create",
      { writes: [writeEntry({ seq: 12, verb: "create", subresource: "status", effect: "created" })] },
      [],
    ],
  ])("%s", (_name, fields, problems) => {
    expect(deletionProblems(end(fields), contract.customResource)).toEqual(problems);
  });
});

describe("what a create after the delete was made from", () => {
  // Seen on the reference in the kill matrix: the garbage collector deleted the registration of a
  // terminating WebApp, the ConfigMap informer woke a reconcile before the WebApp informer had
  // shown the deletionTimestamp, and that reconcile created the registration again. Once it then
  // wrote the status with the resourceVersion the WebApp had before the delete (a 409: proof of
  // the old view); once (a run with a settle of 0 ms) its status needed no write, and the next
  // write of the WebApp was the next reconcile's finalizer release, with the new view (no proof
  // either way).
  const registration = (fields: Partial<WriteEntry> = {}) =>
    writeEntry({
      seq: 10,
      run: 1,
      verb: "create",
      group: "",
      resource: "configmaps",
      name: `registration-${UID}`,
      effect: "created",
      code: 201,
      ...fields,
    });
  const statusWrite = (fields: Partial<WriteEntry> = {}) =>
    writeEntry({
      seq: 11,
      run: 1,
      group: "demo.reconcile-conformance.dev",
      resource: "webapps",
      subresource: "status",
      name: "hello",
      sentResourceVersion: "100",
      code: 409,
      reason: "Conflict",
      effect: "rejected",
      ...fields,
    });
  const newerView = (seq: number) =>
    statusWrite({ seq, sentResourceVersion: "101", code: 200, reason: undefined, effect: "changed" });
  const versions = { versionsBeforeDelete: ["99", "100"] };

  it.each<[string, Partial<DeletionEnd>, { judged: number[]; excused: number[]; undecided: number[] }]>([
    [
      "its next write of the custom resource sent the pre-delete resourceVersion: a view without the deletion",
      { ...versions, writes: [registration(), statusWrite()] },
      { judged: [], excused: [10], undecided: [] },
    ],
    [
      "an earlier write of the same run since the delete had shown a newer view: a view with the deletion",
      { ...versions, writes: [newerView(9.5), registration(), statusWrite()] },
      { judged: [10], excused: [], undecided: [] },
    ],
    [
      "an earlier merge patch of the same run took off a finalizer (no resourceVersion sent): a view with the deletion",
      {
        ...versions,
        writes: [
          statusWrite({
            seq: 9.5,
            subresource: undefined,
            verb: "patch",
            sentResourceVersion: undefined,
            code: 200,
            reason: undefined,
            effect: "changed",
            changedPaths: ["metadata.finalizers"],
          }),
          registration(),
        ],
      },
      { judged: [10], excused: [], undecided: [] },
    ],
    [
      "a newer view sent for another object of the kind says nothing of this one's",
      {
        ...versions,
        customResourceName: "hello",
        writes: [
          statusWrite({ seq: 9.5, name: "other", sentResourceVersion: "101", code: 200 }),
          registration(),
        ],
      },
      { judged: [], excused: [], undecided: [10] },
    ],
    [
      "its next write sent a resourceVersion from after the delete: may be a later reconcile's, cannot tell",
      { ...versions, writes: [registration(), newerView(11)] },
      { judged: [], excused: [], undecided: [10] },
    ],
    [
      "the next write is another process's (a restarted operator): cannot tell",
      { ...versions, writes: [registration(), statusWrite({ run: 2 })] },
      { judged: [], excused: [], undecided: [10] },
    ],
    [
      "an earlier newer view of another process says nothing of this one's",
      { ...versions, writes: [newerView(9.5), registration({ run: 2 })] },
      { judged: [], excused: [], undecided: [10] },
    ],
    [
      "no write of the custom resource follows: cannot tell",
      { ...versions, writes: [registration()] },
      { judged: [], excused: [], undecided: [10] },
    ],
    [
      "an observation recorded without the versions: cannot tell",
      { writes: [newerView(9.5), registration(), statusWrite()] },
      { judged: [], excused: [], undecided: [10] },
    ],
  ])("%s", (_name, fields, expected) => {
    const creates = createsAfterTheDelete(end(fields), contract.customResource);
    expect({
      judged: creates.judged.map((c) => c.write.seq),
      excused: [...creates.excused.keys()],
      undecided: [...creates.undecided.keys()],
    }).toEqual(expected);
  });

  it("says in the evidence why a create is not judged", () => {
    const excused = end({ versionsBeforeDelete: ["100"], writes: [registration(), statusWrite()] });
    const judged = noResurrection.judge({ end: excused }, contract);
    expect(judged.status).toBe("passed");
    expect(judged.message).toContain("but 1 create(s) from a view without the deletion");
    expect(judged.evidence?.notes).toContain(
      `not judged: write 10 (create configmaps/registration-${UID}) was made from a view without the deletion: the same process's next write of the custom resource (write 11, 409 Conflict) sent resourceVersion 100, which it had before the delete`,
    );
  });

  it("judges the reference's real observation inconclusive, where the run had failed it", async () => {
    const recorded = JSON.parse(
      await readFile("test/fixtures/deletion/reference-create-from-an-unknown-view.json", "utf8"),
    ) as { recordedVerdict: { status: string }; observation: ResurrectionObservation };
    expect(recorded.recordedVerdict.status).toBe("failed");
    const judged = noResurrection.judge(recorded.observation, contract);
    expect(judged.status).toBe("inconclusive");
    expect(judged.evidence?.notes?.find((n) => n.startsWith("cannot tell: write 10 "))).toContain(
      "its next (write 12) sent resourceVersion 3221, from after the delete",
    );
  });

  it("is inconclusive, never failed or passed, on a create it cannot tell", () => {
    const undecided = end({ ...versions, writes: [registration(), newerView(11)] });
    expect(deletionProblems(undecided, contract.customResource)).toEqual([]);
    for (const judged of [
      noResurrection.judge({ end: undecided }, contract),
      crashDuringCleanup.judge({ crashed: true, target: "t", proof: [], end: undecided }, contract),
      cleanupRetried.judge(
        {
          status: 500,
          failed: writeEntry({ ...registration(), seq: 9.7, verb: "delete", effect: "rejected", code: 500 }),
          end: end({
            ...versions,
            writes: [
              writeEntry({ ...registration(), seq: 9.7, verb: "delete", effect: "rejected", code: 500 }),
              registration(),
              writeEntry({ ...registration(), seq: 10.5, verb: "delete", effect: "deleted", code: 200 }),
              newerView(11),
            ],
          }),
        },
        contract,
      ),
    ]) {
      expect(judged.status).toBe("inconclusive");
      expect(judged.attemptAgain).toContain("a race between two informers");
      expect(judged.message).toContain("(write 10) and nothing shows whether it had seen the deletion");
      expect(judged.evidence?.notes).toContain(
        `cannot tell: write 10 (create configmaps/registration-${UID}): nothing shows whether the reconcile that made it had seen the deletion: the same process had sent no write of the custom resource since the delete, its next (write 11) sent resourceVersion 101, from after the delete, which may be a later reconcile's`,
      );
    }
  });
});

describe("the deletion checks' judges", () => {
  it("crash-during-cleanup: passes a finished deletion, fails a leak, is inconclusive when the write never came", () => {
    const crashed = {
      crashed: true as const,
      target: "crash after delete configmaps/directory-<uid>",
      proof: ["crash after write 10"],
    };
    expect(crashDuringCleanup.judge({ ...crashed, end: end() }, contract).status).toBe("passed");
    const leak = crashDuringCleanup.judge({ ...crashed, end: end({ leftovers: ["ConfigMap/x"] }) }, contract);
    expect(leak).toMatchObject({
      status: "failed",
      message: "the cleanup left ConfigMap/x behind (the reference's cleanup deletes it)",
    });
    expect(crashDuringCleanup.judge({ crashed: false, target: "t", end: end() }, contract).status).toBe(
      "inconclusive",
    );
    expect(
      crashDuringCleanup.judge(
        { crashed: false, target: "t", end: end({ leftovers: ["ConfigMap/x"] }) },
        contract,
      ).status,
    ).toBe("failed");
  });

  it("cleanup-retried: a retry before the release passes; a release first, or no retry, fails", () => {
    const failed = cleanupDelete({ seq: 10, code: 500, effect: "rejected" });
    const retried = end({ writes: [failed, cleanupDelete({ seq: 12 }), release({ seq: 13 })] });
    expect(cleanupRetried.judge({ status: 500, failed, end: retried }, contract).status).toBe("passed");
    const givesUp = cleanupRetried.judge(
      {
        status: 500,
        failed,
        end: end({ writes: [failed, release({ seq: 11 })], leftovers: ["ConfigMap/x"] }),
      },
      contract,
    );
    expect(givesUp.status).toBe("failed");
    expect(givesUp.message).toContain(`it never deleted configmaps/directory-${UID} again after the 500`);
    const early = cleanupRetried.judge(
      {
        status: 504,
        failed,
        end: end({
          writes: [failed, release({ seq: 11 }), cleanupDelete({ seq: 12, code: 404, effect: "rejected" })],
        }),
      },
      contract,
    );
    expect(early.message).toContain(
      "it released the custom resource (write 11) before the cleanup succeeded (write 12)",
    );
    expect(cleanupRetried.judge({ status: 500, end: end() }, contract).status).toBe("inconclusive");
  });

  it("no-resurrection: fails a create while terminating, lists child updates without judging them", () => {
    const update = writeEntry({ seq: 12, resource: "deployments", name: "hello" });
    const passed = noResurrection.judge(
      { end: end({ writes: [cleanupDelete(), update, release({ seq: 13 })] }) },
      contract,
    );
    expect(passed.status).toBe("passed");
    expect(passed.evidence?.notes).toContain(
      "write 12: update deployments/hello while terminating (an update, not judged)",
    );
    const create = writeEntry({
      seq: 12,
      verb: "create",
      resource: "deployments",
      name: "hello",
      effect: "created",
    });
    // The finalizer's release (write 11) sent a resourceVersion from after the delete: the process had seen it.
    const released = release({ sentResourceVersion: "101", effect: "changed" });
    expect(
      noResurrection.judge(
        { end: end({ versionsBeforeDelete: ["100"], writes: [released, create] }) },
        contract,
      ).message,
    ).toBe("in a foreground deletion: it created deployments/hello (write 12) after the deletion began");
    expect(
      noResurrection.judge(
        { end: end({ versionsBeforeDelete: ["100"], writes: [released, create] }) },
        contract,
      ).evidence?.notes,
    ).toContain(
      "judged: write 12 (create deployments/hello) came after the same process's write 11 of the custom resource, which sent resourceVersion 101, from after the delete: its view had the deletion",
    );
  });

  it("no-resurrection: says when the kit's hold kept the custom resource terminating, and judges as without it", () => {
    const create = writeEntry({
      seq: 12,
      verb: "create",
      resource: "services",
      name: "hello",
      effect: "created",
    });
    const released = release({ sentResourceVersion: "101", effect: "changed" });
    const held = noResurrection.judge(
      { end: end({ versionsBeforeDelete: ["100"], writes: [released, create] }), hold: { releasedAt: 14 } },
      contract,
    );
    expect(held.status).toBe("failed");
    expect(held.evidence?.notes).toContainEqual(
      expect.stringMatching(
        /^the kit held the terminating custom resource with its finalizer reconcile-conformance\.dev\/hold-terminating .* released it at write 14: /,
      ),
    );
    const unheld = noResurrection.judge(
      { end: end({ writes: [cleanupDelete(), release({ seq: 13 })] }) },
      contract,
    );
    expect(unheld.evidence?.notes?.some((n) => n.includes("held"))).toBe(false);
  });
});
