import { describe, expect, it } from "vitest";
import type { WriteEntry } from "../../../../src/proxy/write-log.js";
import type { Status } from "../../../../src/report/report-model.js";
import {
  flipLoops,
  heldUnavailable,
  type HeldUnavailableObservation,
} from "../../../../src/suites/status-stability/held-unavailable.js";
import { contract, deployment, statusWrite, withPromises } from "./fixtures.js";

const refused = [
  {
    by: "ReplicaSet/hello-6776c4558",
    message:
      'Error creating: pods "hello-6776c4558-rslkf" is forbidden: exceeded quota: reconcile-conformance-hold',
  },
];

/** An operator write of the status: the conditions it states (type=status), the fields it changed. */
function write(seq: number, conditions: Record<string, string>, changedPaths?: string[]): WriteEntry {
  return statusWrite({
    seq,
    effect: "changed",
    body: {
      status: {
        conditions: Object.entries(conditions).map(([type, status]) => ({
          type,
          status,
          lastTransitionTime: `2025-01-01T00:00:0${seq % 10}Z`,
        })),
      },
    },
    ...(changedPaths ? { changedPaths } : {}),
  });
}

const ready = (status: string) => ({ conditions: [{ type: "Ready", status, lastTransitionTime: "t" }] });

/** The quota is created at seq 1 and deleted at seq 20: writes 2..19 are the hold's. */
function observation(fields: Partial<HeldUnavailableObservation> = {}): HeldUnavailableObservation {
  return {
    outcome: "settled",
    holdMs: 5000,
    heldAfter: 1,
    releasedAt: 20,
    refusals: refused,
    writes: [
      write(3, { Ready: "False" }, ["status.conditions"]),
      write(22, { Ready: "True" }, [
        "status.conditions[type=Ready].status",
        "status.conditions[type=Ready].lastTransitionTime",
      ]),
    ],
    children: [deployment],
    status: ready("True"),
    notes: [],
    convergedBy: ["convergence after the hold: ready and quiet (Ready=True for generation 1)"],
    ...fields,
  };
}

const restamp = (seq: number) =>
  write(seq, { Ready: "False" }, ["status.conditions[type=Ready].lastTransitionTime"]);

const rows: {
  readonly name: string;
  readonly observation: HeldUnavailableObservation;
  readonly promises?: Parameters<typeof withPromises>[0];
  readonly status: Status;
  readonly message: RegExp;
}[] = [
  {
    name: "passed: Ready stated False once while held, True after the release",
    observation: observation(),
    status: "passed",
    message:
      /^with Pods held for 5 s, 1 write\(s\) changed the custom resource; no condition got a new lastTransitionTime/,
  },
  {
    name: "failed: a poll restamps Ready=False every second while held (flip-within-reconcile)",
    observation: observation({
      writes: [write(3, { Ready: "False" }, ["status.conditions"]), restamp(5), restamp(7), restamp(9)],
    }),
    status: "failed",
    message:
      /^3 operator write\(s\) gave condition\(s\) Ready a new lastTransitionTime and left their status as it was$/,
  },
  {
    name: "failed: a restamp after the release counts too (the whole history is judged)",
    observation: observation({ writes: [write(3, { Ready: "False" }, ["status.conditions"]), restamp(24)] }),
    status: "failed",
    message: /^1 operator write\(s\) gave condition\(s\) Ready/,
  },
  {
    name: "passed: a restamp of a lastTransitionTime the contract declares volatile",
    observation: observation({
      writes: [write(3, { Ready: "False" }, ["status.conditions"]), restamp(5), restamp(7)],
    }),
    promises: [
      {
        kind: "WebApp",
        keeps: ["resourceVersion", "uid", "generation"],
        volatile: [
          { path: "status.conditions[type=Ready].lastTransitionTime", reason: "restamped on purpose" },
        ],
      },
    ],
    status: "passed",
    message: /^with Pods held for 5 s, 3 write\(s\)/,
  },
  {
    name: "failed: Ready flips True and back twice while held, each a real change of status",
    observation: observation({
      writes: [3, 4, 5, 6, 7].map((seq) => write(seq, { Ready: seq % 2 === 1 ? "False" : "True" })),
    }),
    status: "failed",
    message:
      /^while a child was held unavailable and nothing else changed, condition Ready went False→True→False→True→False: a loop/,
  },
  {
    name: "passed: one flip and back while held is a transient, not a loop",
    observation: observation({
      writes: [3, 4, 5].map((seq) => write(seq, { Ready: seq === 4 ? "True" : "False" })),
    }),
    status: "passed",
    message: /^with Pods held for 5 s, 3 write\(s\)/,
  },
  {
    name: "passed: flips after the release are convergence, not the hold's",
    observation: observation({
      writes: [
        write(3, { Ready: "False" }),
        ...[21, 22, 23, 24, 25].map((seq) => write(seq, { Ready: seq % 2 === 1 ? "False" : "True" })),
      ],
    }),
    status: "passed",
    message: /^with Pods held for 5 s, 1 write\(s\)/,
  },
  {
    name: "skipped: nothing was refused, so nothing was held",
    observation: observation({ refusals: [] }),
    status: "skipped",
    message: /^nothing was held unavailable: no Pod creation in the namespace was refused in 5 s/,
  },
  {
    name: "skipped: no conditions anywhere",
    observation: observation({
      writes: [statusWrite({ seq: 3, effect: "changed", body: { status: { availableReplicas: 0 } } })],
      status: {},
    }),
    status: "skipped",
    message: /^the custom resource reports no conditions$/,
  },
  {
    name: "inconclusive: never quiet after the release, and no churn shown",
    observation: observation({
      outcome: "never-quiet",
      message: "no convergence after the hold within 60 s: Ready=True; last operator write 12 ms ago",
      notes: ["operator: reconciling"],
    }),
    status: "inconclusive",
    message: /^no convergence after the hold within 60 s/,
  },
  {
    name: "failed: never quiet, but the restamps it made are decisive",
    observation: observation({ outcome: "never-quiet", message: "no convergence", writes: [restamp(5)] }),
    status: "failed",
    message: /^1 operator write\(s\) gave condition\(s\) Ready/,
  },
];

describe("status-stability/held-unavailable's judge", () => {
  it.each(rows)("$name", (row) => {
    const verdict = heldUnavailable.judge(
      row.observation,
      row.promises ? withPromises(row.promises) : contract,
    );
    expect(verdict.status).toBe(row.status);
    expect(verdict.message).toMatch(row.message);
    if (row.status !== "skipped")
      expect(verdict.evidence?.notes?.join("\n")).toMatch(/Pods held for 5 s|operator: reconciling/);
  });

  it("names the refusal that proves the hold in the evidence", () => {
    const verdict = heldUnavailable.judge(observation(), contract);
    expect(verdict.evidence?.notes?.[0]).toBe(
      `Pods held for 5 s: 1 creation(s) refused (ReplicaSet/hello-6776c4558: ${refused[0]?.message})`,
    );
  });
});

describe("flipLoops", () => {
  it("collapses repeats and counts returns to the status two changes before", () => {
    const writes = ["False", "False", "True", "False", "True", "True"].map((s, i) =>
      write(i + 2, { Ready: s, Degraded: "True" }),
    );
    const [readyLoop, degraded] = flipLoops(writes, contract);
    expect(readyLoop).toMatchObject({
      type: "Ready",
      statuses: ["False", "True", "False", "True"],
      roundTrips: 2,
    });
    expect(readyLoop?.writes.map((w) => w.seq)).toEqual([2, 4, 5, 6]);
    expect(degraded).toMatchObject({ type: "Degraded", statuses: ["True"], roundTrips: 0 });
  });

  it("reads only the operator's changing writes of the custom resource that list conditions", () => {
    const writes = [
      write(2, { Ready: "False" }),
      { ...write(3, { Ready: "True" }), effect: "no-op" as const },
      { ...write(4, { Ready: "True" }), actor: "kit" as const },
      statusWrite({ seq: 5, effect: "changed", body: [{ op: "replace", path: "/status/x", value: 1 }] }),
      { ...write(6, { Ready: "True" }), resource: "deployments", group: "apps" },
      write(7, { Ready: "False" }),
    ];
    expect(flipLoops(writes, contract)).toEqual([
      expect.objectContaining({ type: "Ready", statuses: ["False"], roundTrips: 0 }),
    ]);
  });
});
