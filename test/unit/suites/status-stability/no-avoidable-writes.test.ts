import { describe, expect, it } from "vitest";
import type { Contract } from "../../../../src/contract/load-contract.js";
import type { Status } from "../../../../src/report/report-model.js";
import { noAvoidableWrites } from "../../../../src/suites/status-stability/no-avoidable-writes.js";
import type { RestartAndTouchesObservation } from "../../../../src/suites/status-stability/restart-and-touches.js";
import { writeEntry } from "../../../support/write-entry.js";
import {
  contract,
  customResource,
  deployment,
  neverQuiet,
  service,
  settled,
  statusWrite,
  TICK_MARK,
  tickCreate,
  tickStatus,
  unchanged,
  withPromises,
} from "./fixtures.js";

const heartbeatPromises = withPromises([
  {
    kind: "WebApp",
    keeps: ["resourceVersion", "uid", "generation"],
    volatile: [{ path: "status.lastHeartbeatTime", reason: "heartbeat" }],
  },
]);
const deploymentRecreated = withPromises([
  {
    kind: "Deployment",
    keeps: ["resourceVersion", "generation"],
    reason: "recreated on purpose",
    volatile: [],
  },
]);
const deploymentVolatile = withPromises([
  {
    kind: "Deployment",
    keeps: ["resourceVersion", "uid", "generation"],
    volatile: [{ path: "metadata.annotations", reason: "a hash annotation" }],
  },
]);

const heartbeat = statusWrite({ seq: 26, changedPaths: ["status.lastHeartbeatTime"] });
const scaled = writeEntry({ seq: 26, changedPaths: ["spec.replicas"] });
const annotated = writeEntry({ seq: 27, changedPaths: ["metadata.annotations.hash"] });
const unreadDeployment = writeEntry({ seq: 27, changedPaths: undefined });
const configMap = {
  ref: { apiVersion: "v1", kind: "ConfigMap", name: "extra", namespace: "ns" },
  group: "",
  resource: "configmaps",
  uid: "u-cm",
  resourceVersion: "40",
};
const movedDeployment = [
  { ref: deployment.ref, gone: false as const, uid: "u-web", generation: 2 },
  ...unchanged([service]),
];

interface Row {
  readonly name: string;
  readonly observation: RestartAndTouchesObservation;
  readonly contract?: Contract;
  readonly status: Status;
  readonly message: string;
  /** A note the evidence must hold. */
  readonly note?: string;
  readonly evidenceWrites?: number;
  readonly noEvidence?: true;
}

const rows: Row[] = [
  {
    name: "passed: no write at all",
    observation: settled(),
    status: "passed",
    message: "no operator write changed anything (0 request(s), 0 ambiguous)",
    noEvidence: true,
  },
  {
    name: "passed: no-op writes only",
    observation: settled({ after: [statusWrite({ seq: 26, effect: "no-op" })] }),
    status: "passed",
    message: "no operator write changed anything (1 request(s), 0 ambiguous)",
    noEvidence: true,
  },
  {
    name: "passed with notes: an ambiguous write",
    observation: settled({ after: [writeEntry({ seq: 26, effect: "ambiguous", effectWhy: "no answer" })] }),
    status: "passed",
    message: "no operator write changed anything (1 request(s), 1 ambiguous)",
    note: "ambiguous (not counted): #26 no answer",
    evidenceWrites: 1,
  },
  {
    name: "passed with notes: a heartbeat the promises allow",
    observation: settled({ after: [heartbeat], settled: customResource({ resourceVersion: "31" }) }),
    contract: heartbeatPromises,
    status: "passed",
    message:
      "no operator write changed anything the contract promises to keep (1 request(s), 0 ambiguous, 1 allowed by its promises)",
    note: "not counted: #26 update webapps/hello/status changed only volatile fields: status.lastHeartbeatTime (promises[0]: heartbeat)",
    evidenceWrites: 1,
  },
  {
    name: "failed: a write changed a child",
    observation: settled({ after: [scaled] }),
    status: "failed",
    message: "1 operator write(s) changed stored state",
    evidenceWrites: 1,
  },
  {
    name: "failed: a child is gone",
    observation: settled({
      liveChildren: [service],
      referenceChildrenNow: [{ ref: deployment.ref, gone: true }, ...unchanged([service])],
    }),
    status: "failed",
    message: "0 operator write(s) changed stored state; Deployment/web is gone",
    note: "Deployment/web is gone",
  },
  {
    name: "failed: a child was recreated",
    observation: settled({
      referenceChildrenNow: [
        { ref: deployment.ref, gone: false, uid: "u-web-2", generation: 1 },
        ...unchanged([service]),
      ],
    }),
    status: "failed",
    message: "0 operator write(s) changed stored state; Deployment/web was recreated (uid u-web -> u-web-2)",
  },
  {
    name: "failed: a child's generation moved",
    observation: settled({ after: [scaled], referenceChildrenNow: movedDeployment }),
    status: "failed",
    message: "1 operator write(s) changed stored state; Deployment/web: metadata.generation moved 1 -> 2",
  },
  {
    name: "failed: a new child",
    observation: settled({ liveChildren: [deployment, service, configMap] }),
    status: "failed",
    message: "0 operator write(s) changed stored state; ConfigMap/extra is new",
  },
  {
    name: "passed with notes: a tick of the operator's own clock, its new child and the status that records it",
    observation: settled({
      after: [tickCreate, tickStatus],
      liveChildren: [
        deployment,
        service,
        {
          ...configMap,
          ref: { ...configMap.ref, name: "web-tick-1" },
          madeByClock: { seq: tickCreate.seq, time: tickCreate.time, clock: TICK_MARK },
        },
      ],
    }),
    status: "passed",
    message:
      "no operator write changed anything the contract promises to keep (0 request(s), 0 ambiguous, 0 allowed by its promises)",
    note: "not counted: #23, made by the operator's clock: write 23 at 12:00:05.000, 5.0 s after the operator's write 22",
  },
  {
    name: "inconclusive: a tick's create inside the restart's reconcile (no mark), a delayed requeue pending at the baseline, no horizon",
    observation: settled({
      after: [{ ...tickCreate, clock: undefined }],
      liveChildren: [deployment, service, { ...configMap, ref: { ...configMap.ref, name: "web-tick-1" } }],
      clockPendingAtBaseline: true,
    }),
    status: "inconclusive",
    message:
      "1 operator write(s) of objects named as a schedule's ticks are (configmaps/web-tick-1), while its last reconcile before the restart had asked for a delayed requeue: a tick that fell due inside the restart's or the touches' reconciles cannot be told from an answer without a clock horizon (clock.horizon)",
    evidenceWrites: 1,
  },
  {
    name: "failed: the same create with nothing pending at the baseline",
    observation: settled({
      after: [{ ...tickCreate, clock: undefined }],
      liveChildren: [deployment, service, { ...configMap, ref: { ...configMap.ref, name: "web-tick-1" } }],
    }),
    status: "failed",
    message: "1 operator write(s) changed stored state; ConfigMap/web-tick-1 is new",
  },
  {
    name: "failed: a child named for its role, a delayed requeue pending all the same",
    observation: settled({ liveChildren: [deployment, service, configMap], clockPendingAtBaseline: true }),
    status: "failed",
    message: "0 operator write(s) changed stored state; ConfigMap/extra is new",
  },
  {
    name: "failed: a heartbeat of its clock, with no promise that declares it volatile",
    observation: settled({ after: [{ ...heartbeat, clock: TICK_MARK }] }),
    status: "failed",
    message: "1 operator write(s) changed stored state",
  },
  {
    name: "passed with notes: a recreation the promises allow",
    observation: settled({
      referenceChildrenNow: [
        { ref: deployment.ref, gone: false, uid: "u-web-2", generation: 1 },
        ...unchanged([service]),
      ],
    }),
    contract: deploymentRecreated,
    status: "passed",
    message:
      "no operator write changed anything the contract promises to keep (0 request(s), 0 ambiguous, 0 allowed by its promises)",
    note: "not counted: Deployment/web was recreated (uid u-web -> u-web-2): Deployment/web does not promise uid (promises[0]: recreated on purpose)",
  },
  {
    name: "passed with notes: a generation moved only by volatile writes",
    observation: settled({ after: [annotated], referenceChildrenNow: movedDeployment }),
    contract: deploymentVolatile,
    status: "passed",
    message:
      "no operator write changed anything the contract promises to keep (1 request(s), 0 ambiguous, 1 allowed by its promises)",
    note: "not counted: Deployment/web: metadata.generation moved 1 -> 2: moved only by writes of volatile fields (#27)",
  },
  {
    name: "inconclusive: a change to an object with volatile fields could not be read",
    observation: settled({ after: [unreadDeployment] }),
    contract: deploymentVolatile,
    status: "inconclusive",
    message:
      "1 change(s) to objects that have volatile fields could not be judged: which fields the writes changed could not be read",
    note: "not judged: #27 update deployments/web: its object has volatile fields and the fields it changed could not be read",
    evidenceWrites: 1,
  },
  {
    name: "inconclusive: a generation moved by writes that could not be read",
    observation: settled({ after: [unreadDeployment], referenceChildrenNow: movedDeployment }),
    contract: deploymentVolatile,
    status: "inconclusive",
    message: "2 change(s) to objects that have volatile fields could not be judged",
    note: "not judged: Deployment/web: metadata.generation moved 1 -> 2: the fields its writes changed could not be read (#27)",
  },
  {
    name: "inconclusive: the custom resource moved with no operator write",
    observation: settled({ settled: customResource({ resourceVersion: "33" }) }),
    status: "inconclusive",
    message:
      "the custom resource's resourceVersion moved from 30 (the kit's touch) to 33 with no operator write through the proxy",
    note: "a writer the proxy did not see changed the custom resource: does the operator write through another client?",
  },
  {
    name: "passed: the custom resource moved by an ambiguous operator write after the touch",
    observation: settled({
      settled: customResource({ resourceVersion: "33" }),
      after: [statusWrite({ seq: 26, effect: "ambiguous", effectWhy: "dropped" })],
    }),
    status: "passed",
    message: "no operator write changed anything (1 request(s), 1 ambiguous)",
  },
  {
    name: "passed: no kit touch of the custom resource in the write log",
    observation: settled({
      settled: customResource({ resourceVersion: "33" }),
      customResourceTouch: undefined,
    }),
    status: "passed",
    message: "no operator write changed anything (0 request(s), 0 ambiguous)",
  },
  {
    name: "never quiet, ready: writes that changed stored state fail",
    observation: neverQuiet({ writes: [scaled, statusWrite({ seq: 27, effect: "no-op" })] }),
    status: "failed",
    message:
      "the custom resource was ready but the operator never fell quiet: 1 write(s) changed stored state (no convergence after the touches within 60 s",
    note: "2 operator write(s) in the wait; the last 2 shown",
    evidenceWrites: 1,
  },
  {
    name: "never quiet, ready: only no-ops is inconclusive",
    observation: neverQuiet({ writes: [statusWrite({ seq: 27, effect: "no-op" })] }),
    status: "inconclusive",
    message: "no convergence after the touches within 60 s: Ready; last operator write 12 ms ago",
    note: "operator: reconciling",
    evidenceWrites: 1,
  },
  {
    name: "never quiet, ready: a heartbeat the promises allow is not counted",
    observation: neverQuiet({ writes: [heartbeat] }),
    contract: heartbeatPromises,
    status: "inconclusive",
    message: "no convergence after the touches within 60 s",
    note: "1 of them allowed by the contract's promises, e.g. #26 update webapps/hello/status changed only volatile fields",
  },
  {
    name: "never quiet, ready: an unread change is noted",
    observation: neverQuiet({ writes: [unreadDeployment] }),
    contract: deploymentVolatile,
    status: "inconclusive",
    message: "no convergence after the touches within 60 s",
    note: "not judged: #27 update deployments/web: its object has volatile fields",
  },
  {
    name: "never quiet, not ready: runaway creation fails",
    observation: neverQuiet({
      ready: false,
      writes: [1, 2, 3, 4, 5].map((seq) =>
        writeEntry({
          seq,
          verb: "create",
          resource: "configmaps",
          group: "",
          name: `cm-${seq}`,
          effect: "created",
        }),
      ),
    }),
    status: "failed",
    message:
      "the operator never fell quiet (and the custom resource never became ready): 5 write(s) changed stored state, 5 of them creates of configmaps",
    evidenceWrites: 5,
  },
  {
    name: "never quiet, not ready: a pod template changed again and again (a rollout each) fails",
    observation: neverQuiet({
      ready: false,
      writes: [1, 2, 3, 4, 5].map((seq) =>
        writeEntry({
          seq,
          changedPaths: ['spec.template.metadata.annotations["example.com/reconciled-at"]'],
        }),
      ),
    }),
    status: "failed",
    message:
      "the operator never fell quiet (and the custom resource never became ready): 5 write(s) changed stored state, 5 of them changes of deployments/web's pod template, a rollout each",
    evidenceWrites: 5,
  },
  {
    name: "never quiet, not ready: four rollouts, or a staged rollout's replicas, are still progress",
    observation: neverQuiet({
      ready: false,
      writes: [
        ...[1, 2, 3, 4].map((seq) =>
          writeEntry({ seq, changedPaths: ["spec.template.spec.containers[name=web].image"] }),
        ),
        ...[5, 6, 7, 8, 9].map((seq) => writeEntry({ seq, changedPaths: ["spec.replicas"] })),
        writeEntry({ seq: 10, name: "other", changedPaths: ["spec.template.metadata.labels.v"] }),
      ],
    }),
    status: "inconclusive",
    message: "no convergence after the touches within 60 s",
    evidenceWrites: 10,
  },
  {
    name: "never quiet, not ready: progress is inconclusive",
    observation: neverQuiet({ ready: false, writes: [scaled] }),
    status: "inconclusive",
    message: "no convergence after the touches within 60 s",
    evidenceWrites: 1,
  },
];

describe("status-stability/no-avoidable-writes", () => {
  it.each(rows)("$name", (row) => {
    const judgement = noAvoidableWrites.judge(row.observation, row.contract ?? contract);
    expect(judgement.status).toBe(row.status);
    expect(judgement.message).toContain(row.message);
    if (row.note)
      expect(judgement.evidence?.notes ?? []).toEqual(
        expect.arrayContaining([expect.stringContaining(row.note)]),
      );
    if (row.evidenceWrites !== undefined) expect(judgement.evidence?.writes).toHaveLength(row.evidenceWrites);
    if (row.noEvidence) expect(judgement.evidence).toBeUndefined();
  });

  it("shows only the last 20 writes of a scenario that never fell quiet", () => {
    const writes = Array.from({ length: 25 }, (_, i) =>
      writeEntry({ seq: i + 1, changedPaths: ["spec.replicas"] }),
    );
    const judgement = noAvoidableWrites.judge(neverQuiet({ writes }), contract);
    expect(judgement.message).toContain("25 write(s) changed stored state");
    expect(judgement.evidence?.writes).toHaveLength(20);
    expect(judgement.evidence?.notes?.[0]).toBe("25 operator write(s) in the wait; the last 20 shown");
  });
});
