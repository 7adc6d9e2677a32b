import { describe, expect, it } from "vitest";
import { loadContract } from "../../../../src/contract/load-contract.js";
import type { WriteEntry } from "../../../../src/proxy/write-log.js";
import type { SpecReference } from "../../../../src/scenario/spec-references.js";
import { cleanupRetried } from "../../../../src/suites/deletion/cleanup-retried.js";
import { crashDuringCleanup } from "../../../../src/suites/deletion/crash-during-cleanup.js";
import {
  createsFromAViewBeforeTheDelete,
  deletionProblems,
  deletionReference,
  type DeletionEnd,
} from "../../../../src/suites/deletion/deletion-end.js";
import { noResurrection } from "../../../../src/suites/deletion/no-resurrection.js";
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
      "a create after the delete, and the same name deleted as two objects",
      {
        writes: [
          cleanupDelete(),
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

describe("a create from a view without the deletion", () => {
  // Seen on the reference in the kill matrix: the garbage collector deleted the registration of a
  // terminating WebApp, the ConfigMap informer woke a reconcile before the WebApp informer had
  // shown the deletionTimestamp, and that reconcile created the registration again and then wrote
  // the status with the resourceVersion the WebApp had before the delete (a 409).
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
  const created = `it created configmaps/registration-${UID} (write 10) after the deletion began`;

  it.each<[string, Partial<DeletionEnd>, string[]]>([
    [
      "its next write of the custom resource sent the pre-delete resourceVersion: shown, not failed",
      { versionsBeforeDelete: ["99", "100"], writes: [registration(), statusWrite()] },
      [],
    ],
    [
      "its next write sent a resourceVersion from after the delete: it saw the deletion",
      {
        versionsBeforeDelete: ["99", "100"],
        writes: [registration(), statusWrite({ sentResourceVersion: "101" })],
      },
      [created],
    ],
    [
      "an earlier write of the same run since the delete had shown a newer view",
      {
        versionsBeforeDelete: ["99", "100"],
        writes: [
          statusWrite({
            seq: 9.5,
            sentResourceVersion: "101",
            code: 200,
            reason: undefined,
            effect: "changed",
          }),
          registration(),
          statusWrite(),
        ],
      },
      [created],
    ],
    [
      "the next write is another process's (a restarted operator): no proof",
      { versionsBeforeDelete: ["99", "100"], writes: [registration(), statusWrite({ run: 2 })] },
      [created],
    ],
    [
      "no write of the custom resource follows: no proof",
      { versionsBeforeDelete: ["99", "100"], writes: [registration()] },
      [created],
    ],
    [
      "an observation recorded without the versions: nothing excused",
      { writes: [registration(), statusWrite()] },
      [created],
    ],
  ])("%s", (_name, fields, problems) => {
    expect(deletionProblems(end(fields), contract.customResource)).toEqual(problems);
  });

  it("says in the evidence why a create is not judged", () => {
    const excused = end({ versionsBeforeDelete: ["100"], writes: [registration(), statusWrite()] });
    expect([...createsFromAViewBeforeTheDelete(excused, contract.customResource).keys()]).toEqual([10]);
    const judged = noResurrection.judge({ end: excused }, contract);
    expect(judged.status).toBe("passed");
    expect(judged.message).toContain("but 1 create(s) from a view without the deletion");
    expect(judged.evidence?.notes).toContain(
      `not judged: write 10 (create configmaps/registration-${UID}) was made from a view without the deletion: the same process's next write of the custom resource (write 11, 409 Conflict) sent resourceVersion 100, which it had before the delete`,
    );
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
    expect(noResurrection.judge({ end: end({ writes: [create] }) }, contract).message).toBe(
      "in a foreground deletion: it created deployments/hello (write 12) after the deletion began",
    );
  });
});
