import { describe, expect, it } from "vitest";
import type { HistoricalReadProof } from "../../../../src/proxy/historical-reads.js";
import type { SpecReference } from "../../../../src/scenario/spec-references.js";
import type { CrashLine } from "../../../../src/suites/shared/crash-lines.js";
import {
  etcdRevision,
  restartFromThePast,
  type Crashed,
  type RestartFromThePastObservation,
} from "../../../../src/suites/staleness/restart-from-the-past.js";
import { writeEntry } from "../../../support/write-entry.js";
import { exampleContract, service, serviceCreate, serviceDelete, watchProof } from "./staleness-fixtures.js";

/** The reference's second counted write: the create of Service web. */
const LINE: CrashLine = {
  ordinal: 2,
  write: serviceCreate(2, "web", "ref-uid"),
  id: "#2 create services/web",
};

const PROOF =
  "crash after write 3 (create services/web, answered 201, resourceVersion 42): SIGKILL to pids 7 of run 1";

/** The crash after the create of Service web, whose answer had `resourceVersion` (null: none). */
function crashed(resourceVersion: string | null = "42"): Crashed {
  return {
    status: "crashed",
    hit: { ...serviceCreate(3, "web", "u1"), ...(resourceVersion === null ? {} : { resourceVersion }) },
    kill: { signal: "SIGKILL", pids: [7], run: 1 },
    proof: [PROOF],
  };
}

/** What the historical reads did: services and webapps listed from revision 41, unless told otherwise. */
function history(changes: Partial<HistoricalReadProof> = {}): HistoricalReadProof {
  return {
    resourceVersion: "41",
    refusedWatchLists: 2,
    lists: [
      { group: "", resource: "services", namespace: "ns", asked: "limit=500", servedFrom: "41", code: 200 },
      {
        group: "demo.reconcile-conformance.dev",
        resource: "webapps",
        namespace: "ns",
        asked: "",
        servedFrom: "41",
        code: 200,
      },
    ],
    watches: [{ group: "", resource: "services", namespace: "ns", code: 200 }],
    ...changes,
  };
}

type Restarted = Extract<RestartFromThePastObservation, { stage: "restarted" }>;

/** A restart from the past after which the operator kept Service web (uid u1) and converged. */
function restarted(
  changes: Partial<Omit<Restarted, "end">> & { end?: Partial<Restarted["end"]> } = {},
): RestartFromThePastObservation {
  const { end, ...rest } = changes;
  return {
    stage: "restarted",
    line: LINE,
    crash: crashed(),
    history: history(),
    catchUp: [
      { resource: "webapps", proof: watchProof(1, 1) },
      { resource: "services", proof: watchProof(2, 2) },
    ],
    writes: [serviceCreate(3, "web", "u1"), writeEntry({ seq: 4, run: 2 })],
    operatorLog: ["reconciled hello"],
    ...rest,
    end: {
      reference: [service("web", "ref-uid")],
      live: [service("web", "u1")],
      made: [serviceCreate(1, "cache", "u0"), serviceCreate(3, "web", "u1")],
      deletes: [],
      ...end,
    },
  };
}

const CATCH_UP =
  "the catch-up held at first: webapps 1 event(s), services 2 event(s), delivered in order once the restarted operator had acted";
const BEFORE = "restarted with caches from before #2 create services/web: ";

describe("etcdRevision", () => {
  it.each([
    { resourceVersion: "42", revision: 42 },
    { resourceVersion: "2", revision: 2 },
    { resourceVersion: "1", revision: undefined },
    { resourceVersion: "0", revision: undefined },
    { resourceVersion: "abc", revision: undefined },
    { resourceVersion: "4.5", revision: undefined },
    { resourceVersion: "99999999999999999999", revision: undefined },
    { resourceVersion: undefined, revision: undefined },
  ])("$resourceVersion: $revision", ({ resourceVersion, revision }) => {
    expect(etcdRevision(resourceVersion)).toBe(revision);
  });
});

describe("staleness/restart-from-the-past judge", () => {
  it.each([
    {
      name: "the operator converged without the line's write",
      observation: {
        stage: "crash",
        line: LINE,
        crash: { status: "not-reached", writes: [writeEntry()] },
      } as const,
      status: "inconclusive",
      message: "the operator converged without a write 2 like the reference's; nothing to crash after",
    },
    {
      name: "the kill could not be carried out",
      observation: {
        stage: "crash",
        line: LINE,
        crash: { status: "failed", error: "no such process" },
      } as const,
      status: "inconclusive",
      message: "the crash could not be carried out: no such process",
    },
    {
      name: "the crash hit another write",
      observation: {
        stage: "crash",
        line: LINE,
        crash: { status: "diverged", hit: writeEntry({ seq: 3 }), proof: [PROOF] },
      } as const,
      status: "inconclusive",
      message: "write 2 of this scenario was not the reference's: the crash hit another line",
    },
    {
      name: "the create's resourceVersion is no etcd revision",
      observation: { stage: "crash", line: LINE, crash: crashed("abc") } as const,
      status: "inconclusive",
      message:
        "the create's resourceVersion abc is not an etcd revision: the state before it cannot be asked for",
    },
    {
      name: "the create has no resourceVersion",
      observation: { stage: "crash", line: LINE, crash: crashed(null) } as const,
      status: "inconclusive",
      message: "the create's resourceVersion (none) is not an etcd revision",
    },
  ])("$name: $status", async ({ observation, status, message }) => {
    const verdict = restartFromThePast.judge(observation, await exampleContract());
    expect(verdict.status).toBe(status);
    expect(verdict.message).toContain(message);
  });

  it.each([
    {
      name: "the API server no longer had the past",
      history: history({
        lists: [
          {
            group: "",
            resource: "services",
            asked: "",
            servedFrom: "41",
            code: 410,
            refusal: "too old resource version",
          },
        ],
      }),
      message:
        "the past was out of the API server's reach: the list of services at resourceVersion 41 was refused (410): too old resource version",
      note: "list of services served from 41 (asked: no parameters): 410",
    },
    {
      name: "a watch from the past fell out of the watch cache",
      history: history({
        watches: [{ group: "", resource: "services", code: 200, error: "410: too old resource version" }],
      }),
      message:
        "the past was out of the API server's reach: the watch of services from resourceVersion 41 ended in an ERROR event: 410: too old resource version",
      note: "watch of services from 41: 200, then 410: too old resource version",
    },
    {
      name: "no list of the created object's resource was served from the past",
      history: history({
        lists: [
          { group: "", resource: "configmaps", namespace: "ns", asked: "", servedFrom: "41", code: 200 },
        ],
      }),
      message:
        "the restarted operator listed no services after the restart: its view of them was not served from the past",
      note: "list of configmaps in ns served from 41 (asked: no parameters): 200",
    },
  ])("$name: inconclusive, with the proof", async ({ history, message, note }) => {
    const verdict = restartFromThePast.judge(restarted({ history }), await exampleContract());
    expect(verdict.status).toBe("inconclusive");
    expect(verdict.message).toBe(message);
    const notes = verdict.evidence?.notes ?? [];
    expect(notes[0]).toBe(PROOF);
    expect(notes[1]).toBe(
      "historical reads from resourceVersion 41: 2 watch-list request(s) refused (422) so the informers listed",
    );
    expect(notes).toContain(note);
    expect(notes.at(-1)).toBe(CATCH_UP);
    expect(verdict.evidence?.writes).toBeUndefined();
  });

  it.each([
    {
      name: "kept every object and converged",
      uidWithdrawn: false,
      end: {},
      status: "passed",
      message:
        "restarted with caches from resourceVersion 41 (before #2 create services/web), it kept every object it had made and converged to the reference",
      notes: [],
    },
    {
      name: "recreated a Service the contract lets it recreate",
      uidWithdrawn: true,
      end: { live: [service("web", "u2")], deletes: [serviceDelete(5, "web", "u1")] },
      status: "passed",
      message:
        "it kept every object it had made (but for 2 the contract's promises allow: see the notes) and converged to the reference",
      notes: [
        "not counted: services/web was recreated (uid u1 -> u2): Service/web does not promise uid (promises[0]: recreated on every rotation)",
        "not counted: it deleted services/web (write 5, uid u1): Service/web does not promise uid (promises[0]: recreated on every rotation)",
      ],
    },
    {
      name: "deleted and recreated the object its past lacked",
      uidWithdrawn: false,
      end: { live: [service("web", "u2")], deletes: [serviceDelete(5, "web", "u1")] },
      status: "failed",
      message: `${BEFORE}services/web was recreated (uid u1 -> u2); it deleted services/web (write 5, uid u1)`,
      notes: ["services/web was recreated (uid u1 -> u2)", "it deleted services/web (write 5, uid u1)"],
    },
    {
      name: "an object made before the crash is gone",
      uidWithdrawn: false,
      end: {
        made: [serviceCreate(1, "cache", "u0"), serviceCreate(3, "web", "u1")],
        live: [service("web", "u1")],
      },
      status: "failed",
      message: `${BEFORE}services/cache (uid u0) is gone`,
      notes: ["services/cache (uid u0) is gone"],
    },
    {
      name: "a duplicate of the object its past lacked",
      uidWithdrawn: false,
      end: { live: [service("web", "u1"), service("web-x", "u3")] },
      status: "failed",
      message: `${BEFORE}3 Service(s) where the reference has 2 (web, web-x, cache)`,
      notes: ["3 Service(s) where the reference has 2 (web, web-x, cache)"],
    },
    {
      name: "an end state unlike the reference",
      uidWithdrawn: false,
      end: { live: [service("web", "u1", 81)] },
      status: "failed",
      message: `${BEFORE}2 managed field(s) differ from the reference`,
      notes: ["2 managed field(s) differ from the reference"],
    },
  ])("$name: $status", async ({ uidWithdrawn, end, status, message, notes }) => {
    const contract = await exampleContract({ uidWithdrawn });
    // The cache made before the crash is live too, unless the row leaves it out.
    const live = end.live ?? [service("web", "u1")];
    const withCache = end.made ? live : [...live, service("cache", "u0")];
    const reference = end.made
      ? [service("web", "ref-uid")]
      : [service("web", "ref-uid"), service("cache", "r0")];
    const verdict = restartFromThePast.judge(
      restarted({ end: { ...end, live: withCache, reference } }),
      contract,
    );
    expect(verdict.status).toBe(status);
    expect(verdict.message).toContain(message);
    const shown = verdict.evidence?.notes ?? [];
    expect(shown[0]).toBe(PROOF);
    expect(shown).toContain(CATCH_UP);
    for (const note of notes) expect(shown).toContain(note);
    expect(verdict.evidence?.writes).toHaveLength(2);
    expect(verdict.evidence?.operatorLog).toEqual(status === "failed" ? ["reconciled hello"] : undefined);
  });
});

describe("staleness/restart-from-the-past targets", () => {
  const reference = (writes: SpecReference["writes"]): SpecReference => ({
    spec: 0,
    namespace: "ns",
    customResource: {},
    children: [],
    writes,
    specWrites: [],
  });

  it("is one target per create of the reference's crash lines", async () => {
    const contract = await exampleContract();
    const targets = restartFromThePast.targets({
      contract,
      references: new Map([[0, reference([serviceCreate(1, "web", "a"), writeEntry({ seq: 2 })])]]),
    });
    expect("skip" in targets ? targets : targets.map((t) => restartFromThePast.targetName(t))).toEqual([
      "create services/web",
    ]);
  });

  it("is skipped when the operator created nothing", async () => {
    const contract = await exampleContract();
    expect(
      restartFromThePast.targets({
        contract,
        references: new Map([[0, reference([writeEntry({ seq: 1 })])]]),
      }),
    ).toEqual({
      target: "write sequence",
      skip: "the operator created nothing on its way to the reference: no past lacks what it made",
    });
  });
});
