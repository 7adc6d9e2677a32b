import { expect } from "vitest";
import type { Contract } from "../../../../src/contract/load-contract.js";
import { resolvePromises } from "../../../../src/contract/promises.js";
import type { Status } from "../../../../src/report/report-model.js";
import type { Judgement } from "../../../../src/suites/check.js";
import type { CrashLine } from "../../../../src/suites/shared/crash-lines.js";
import type { CrashLineObservation } from "../../../../src/suites/idempotency/crash-line-scenario.js";
import { KILL, service, serviceCreate, write } from "./fixtures.js";

/** One row of the crash-line judge's table. */
export interface CrashLineCase {
  readonly name: string;
  readonly observation: CrashLineObservation;
  readonly contract?: Contract;
  readonly status: Status;
  /** A part of the message that tells this branch from the others. */
  readonly message: string;
  /** More about the verdict (its evidence). */
  readonly also?: (judgement: Judgement) => void;
}

const PROOF = "crash after write 5 (...): SIGKILL to pids 41, 42 of run 1";

/**
 * The branches of the crash-line judge (crash-line-scenario.ts), which
 * crash-after-create and crash-after-write share: each of their tests runs
 * this table against its own check. `line` is a crash line of the check's
 * kind; its write must carry no UID (the hit is not one of the children).
 */
export function crashLineCases(contract: Contract, line: CrashLine): CrashLineCase[] {
  const hit = { ...line.write, seq: 5 };
  const crashed = { status: "crashed" as const, hit, kill: KILL, proof: [PROOF] };
  const after = (
    fields: Partial<Extract<CrashLineObservation, { restarted: true }>> = {},
  ): CrashLineObservation => ({
    restarted: true,
    line,
    crash: crashed,
    reference: [service({ uid: "u-ref" })],
    live: [service({ uid: "u-1" })],
    writes: [
      serviceCreate(3, "u-1"),
      hit,
      write({ seq: 8, verb: "patch" }),
      // Created after the crash, and gone since: not an object the crash could have lost.
      write({ seq: 9, verb: "create", resource: "configmaps", name: "late", effect: "created", uid: "c-9" }),
    ],
    operatorLog: ["reconciled"],
    ...fields,
  });
  const failedEvidence = (judgement: Judgement) => {
    expect(judgement.evidence?.operatorLog).toEqual(["reconciled"]);
    expect(judgement.evidence?.notes?.[0]).toBe(PROOF);
  };
  const rotating = {
    ...contract,
    promises: resolvePromises([
      { kind: "Service", keeps: ["resourceVersion", "generation"], reason: "rotated", volatile: [] },
    ]),
  };
  return [
    {
      name: "not reached: inconclusive, the reference's write and this scenario's shown",
      observation: { restarted: false, line, crash: { status: "not-reached", writes: [serviceCreate(3)] } },
      status: "inconclusive",
      message: `the operator converged without a write ${line.ordinal} like the reference's; nothing to crash after`,
      also: (j) => {
        expect(j.evidence?.writes).toHaveLength(2);
        expect(j.evidence?.notes).toEqual(["first write: the reference's; the rest: this scenario's"]);
      },
    },
    {
      name: "the kill failed: inconclusive",
      observation: { restarted: false, line, crash: { status: "failed", error: "no operator to crash" } },
      status: "inconclusive",
      message: "the crash could not be carried out: no operator to crash",
    },
    {
      name: "another write at the line's position: inconclusive",
      observation: {
        restarted: false,
        line,
        crash: { status: "diverged", hit: write({ seq: 5, name: "other" }), proof: [PROOF] },
      },
      status: "inconclusive",
      message: `write ${line.ordinal} of this scenario was not the reference's: the crash hit another line`,
      also: (j) => expect(j.evidence?.notes).toContain(PROOF),
    },
    {
      name: "crashed but not restarted (never observed): inconclusive",
      observation: { restarted: false, line, crash: crashed },
      status: "inconclusive",
      message: "the crash hit its line, but the operator was not restarted",
    },
    {
      name: "the reference's end state, same UIDs: passed",
      observation: after(),
      status: "passed",
      message:
        "restarted after the crash, it converged to the reference: no duplicate, 1 child(ren) as the reference has them in every field it manages, none recreated",
      also: (j) => {
        expect(j.message).not.toContain("promises allow");
        // The writes from the crashed one on.
        expect(j.evidence?.writes?.map((w) => (w as { seq: number }).seq)).toEqual([5, 8, 9]);
        expect(j.evidence?.notes).toEqual([PROOF]);
        expect(j.evidence?.diffs).toBeUndefined();
        expect(j.evidence?.operatorLog).toBeUndefined();
      },
    },
    {
      name: "recreated, as the contract's promises allow: passed with a note",
      observation: after({ live: [service({ uid: "u-2" })] }),
      contract: rotating,
      status: "passed",
      message: "none recreated but 1 the contract's promises allow (see the notes)",
      also: (j) =>
        expect(j.evidence?.notes).toEqual([
          PROOF,
          "not counted: services/hello was recreated (uid u-1 -> u-2): Service/hello does not promise uid (promises[0]: rotated)",
        ]),
    },
    {
      name: "a child created before the crash recreated: failed",
      observation: after({ live: [service({ uid: "u-2" })] }),
      status: "failed",
      message: "after the crash and restart: services/hello was recreated (uid u-1 -> u-2)",
      also: failedEvidence,
    },
    {
      name: "a child created before the crash gone: failed, missing and gone",
      observation: after({ live: [] }),
      status: "failed",
      message: "after the crash and restart: missing Service/hello; services/hello (uid u-1) is gone",
      also: failedEvidence,
    },
    {
      name: "the object the crashed write created, gone after the restart: failed",
      observation: after({
        crash: { ...crashed, hit: { ...hit, verb: "create", resource: "configmaps", name: "c", uid: "c-5" } },
        writes: [
          serviceCreate(3, "u-1"),
          { ...hit, verb: "create", resource: "configmaps", name: "c", effect: "created", uid: "c-5" },
        ],
      }),
      status: "failed",
      message: "after the crash and restart: configmaps/c (uid c-5) is gone",
      also: failedEvidence,
    },
    {
      name: "gone, as the promises allow (its kind known from the reference), but missing: failed for the missing child only",
      observation: after({ live: [] }),
      contract: rotating,
      status: "failed",
      message: "after the crash and restart: missing Service/hello",
      also: (j) => {
        expect(j.message).not.toContain("is gone");
        expect(j.evidence?.notes).toEqual([
          PROOF,
          "not counted: services/hello (uid u-1) is gone: Service/hello does not promise uid (promises[0]: rotated)",
        ]);
      },
    },
    {
      name: "a duplicate: failed",
      observation: after({ live: [service({ uid: "u-1" }), service({ uid: "u-3", name: "hello-2" })] }),
      status: "failed",
      message: "after the crash and restart: 2 Service(s) where the reference has 1 (hello, hello-2)",
      also: failedEvidence,
    },
    {
      name: "a managed field differs: failed, with the diff",
      observation: after({ live: [service({ uid: "u-1", app: "other" })] }),
      status: "failed",
      message: "after the crash and restart: 1 managed field(s) differ from the reference",
      also: (j) => {
        failedEvidence(j);
        expect(j.evidence?.diffs).toEqual([
          expect.objectContaining({ object: "Service/hello", expected: "hello", actual: "other" }),
        ]);
      },
    },
  ];
}
