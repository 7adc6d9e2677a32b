import { describe, expect, it } from "vitest";
import type { SpecReference } from "../../../../src/scenario/spec-references.js";
import {
  ownCreateUnseen,
  type OwnCreateUnseenObservation,
} from "../../../../src/suites/staleness/own-create-unseen.js";
import { writeEntry } from "../../../support/write-entry.js";
import { exampleContract, service, serviceCreate, serviceDelete, watchProof } from "./staleness-fixtures.js";

/** A scenario in which the operator made Service web (uid u1) and nothing went wrong, unless `changes` say otherwise. */
function observation(changes: Partial<OwnCreateUnseenObservation["end"]> = {}): OwnCreateUnseenObservation {
  return {
    resource: "services",
    released: watchProof(2, 2),
    touches: 3,
    end: {
      reference: [service("web", "ref-uid")],
      live: [service("web", "u1")],
      made: [serviceCreate(3, "web", "u1")],
      deletes: [],
      ...changes,
    },
    writes: [serviceCreate(3, "web", "u1"), writeEntry({ seq: 4 })],
    operatorLog: ["reconciled hello"],
  };
}

const UNSEEN = "while its own services were unseen and 3 reconcile(s) were asked for: ";

describe("staleness/own-create-unseen judge", () => {
  it.each([
    {
      name: "converged as the reference with the same objects",
      uidWithdrawn: false,
      end: {},
      status: "passed",
      message:
        "with its services events held (2 event(s)) through 3 touch(es) of the custom resource, it duplicated nothing, deleted nothing and converged to the reference",
      notes: [],
    },
    {
      name: "recreated and deleted a Service the contract lets it recreate",
      uidWithdrawn: true,
      end: { live: [service("web", "u2")], deletes: [serviceDelete(5, "web", "u1")] },
      status: "passed",
      message:
        "deleted nothing (but for 2 the contract's promises allow: see the notes) and converged to the reference",
      notes: [
        "not counted: services/web was recreated (uid u1 -> u2): Service/web does not promise uid (promises[0]: recreated on every rotation)",
        "not counted: it deleted services/web (write 5, uid u1): Service/web does not promise uid (promises[0]: recreated on every rotation)",
      ],
    },
    {
      name: "a child of the reference is missing",
      uidWithdrawn: false,
      end: { reference: [service("web", "ref-uid"), service("api", "ref-uid-2")] },
      status: "failed",
      message: `${UNSEEN}missing Service/api`,
      notes: ["missing Service/api"],
    },
    {
      name: "a duplicate of the child it could not see",
      uidWithdrawn: false,
      end: { live: [service("web", "u1"), service("web-2", "u3")] },
      status: "failed",
      message: `${UNSEEN}2 Service(s) where the reference has 1 (web, web-2)`,
      notes: ["2 Service(s) where the reference has 1 (web, web-2)"],
    },
    {
      name: "a managed field unlike the reference",
      uidWithdrawn: false,
      end: { live: [service("web", "u1", 81)] },
      status: "failed",
      message: `${UNSEEN}2 managed field(s) differ from the reference`,
      notes: ["2 managed field(s) differ from the reference"],
    },
    {
      name: "recreated the Service it had made, by deleting it",
      uidWithdrawn: false,
      end: { live: [service("web", "u2")], deletes: [serviceDelete(5, "web", "u1")] },
      status: "failed",
      message: `${UNSEEN}services/web was recreated (uid u1 -> u2); it deleted services/web (write 5, uid u1)`,
      notes: ["services/web was recreated (uid u1 -> u2)", "it deleted services/web (write 5, uid u1)"],
    },
    {
      name: "an object it had made is gone",
      uidWithdrawn: false,
      end: { made: [serviceCreate(3, "web", "u1"), serviceCreate(4, "cache", "u9")] },
      status: "failed",
      message: `${UNSEEN}services/cache (uid u9) is gone`,
      notes: ["services/cache (uid u9) is gone"],
    },
  ])("$name: $status", async ({ uidWithdrawn, end, status, message, notes }) => {
    const contract = await exampleContract({ uidWithdrawn });
    const verdict = ownCreateUnseen.judge(observation(end), contract);
    expect(verdict.status).toBe(status);
    expect(verdict.message).toContain(message);
    const shown = verdict.evidence?.notes ?? [];
    expect(shown[0]).toContain(
      "held every services event from the operator's 1 watch stream(s) of them: took 2",
    );
    expect(shown[1]).toBe(
      "3 foreign-label touch(es) of the custom resource while they were held, 1500 ms apart",
    );
    for (const note of notes) expect(shown).toContain(note);
    expect(verdict.evidence?.writes).toHaveLength(2);
    expect(verdict.evidence?.operatorLog).toEqual(status === "failed" ? ["reconciled hello"] : undefined);
  });

  it("shows the fields that differ from the reference", async () => {
    const verdict = ownCreateUnseen.judge(
      observation({ live: [service("web", "u1", 81)] }),
      await exampleContract(),
    );
    expect(verdict.evidence?.diffs).toContainEqual({
      object: "Service/web",
      path: "spec.ports[0].port",
      expected: 80,
      actual: 81,
    });
  });
});

describe("staleness/own-create-unseen targets", () => {
  const reference = (children: SpecReference["children"]): SpecReference => ({
    spec: 0,
    namespace: "ref",
    customResource: {},
    children,
    writes: [],
    specWrites: [],
  });

  it("is one target per kind of the reference's children, named by its resource", async () => {
    const contract = await exampleContract();
    const targets = ownCreateUnseen.targets({
      contract,
      references: new Map([[0, reference([service("web", "a"), service("api", "b")])]]),
    });
    expect(targets).toEqual([{ group: "", resource: "services", names: ["web", "api"] }]);
    expect("skip" in targets ? targets : targets.map((t) => ownCreateUnseen.targetName(t))).toEqual([
      "services",
    ]);
  });

  it("is skipped when the operator created no child", async () => {
    const contract = await exampleContract();
    expect(ownCreateUnseen.targets({ contract, references: new Map([[0, reference([])]]) })).toEqual({
      target: "children",
      skip: "the operator created no child on its way to the reference",
    });
  });
});
