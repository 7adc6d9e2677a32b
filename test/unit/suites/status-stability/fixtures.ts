import { loadContract, type Contract } from "../../../../src/contract/load-contract.js";
import { resolvePromises } from "../../../../src/contract/promises.js";
import type { ContractDocument } from "../../../../src/contract/contract-schema.js";
import type { KubeObject } from "../../../../src/kube/kube-client.js";
import type { WriteEntry } from "../../../../src/proxy/write-log.js";
import type { ChildRecord, ReferenceState } from "../../../../src/scenario/reference-state.js";
import type {
  ChildNow,
  NeverQuietObservation,
  SettledObservation,
} from "../../../../src/suites/status-stability/restart-and-touches.js";
import { writeEntry } from "../../../support/write-entry.js";

/** The example operator's contract: custom resource webapps/hello (WebApp), two spec updates, no promises. */
export const contract: Contract = await loadContract("examples/webapp-operator/reconcile-conformance.yaml");

/** The contract with these promises. */
export function withPromises(promises: ContractDocument["promises"]): Contract {
  return { ...contract, promises: resolvePromises(promises) };
}

export const CR_GROUP = contract.customResource.group;

/** A write of the custom resource's status (webapps/hello/status) by the operator. */
export function statusWrite(fields: Partial<WriteEntry> = {}): WriteEntry {
  return writeEntry({
    group: CR_GROUP,
    version: contract.customResource.version,
    resource: "webapps",
    name: "hello",
    subresource: "status",
    ...fields,
  });
}

/** The reference's Deployment ns/web, generation 1. */
export const deployment: ChildRecord = {
  ref: { apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "ns" },
  group: "apps",
  resource: "deployments",
  uid: "u-web",
  resourceVersion: "5",
  generation: 1,
};

/** The reference's Service ns/web (no generation). */
export const service: ChildRecord = {
  ref: { apiVersion: "v1", kind: "Service", name: "web", namespace: "ns" },
  group: "",
  resource: "services",
  uid: "u-svc",
  resourceVersion: "6",
};

/** The custom resource's status in the baseline: Ready, observed generation 1. */
export const readyStatus = {
  observedGeneration: 1,
  conditions: [
    { type: "Ready", status: "True", lastTransitionTime: "2025-01-01T00:00:00Z" },
    { type: "Progressing", status: "False", lastTransitionTime: "2025-01-01T00:00:01Z" },
  ],
};

export function reference(overrides: Partial<ReferenceState> = {}): ReferenceState {
  return {
    customResource: { uid: "u-cr", resourceVersion: "10", generation: 1, status: readyStatus },
    children: [deployment, service],
    writes: [],
    markSeq: 20,
    ...overrides,
  };
}

/** The custom resource once settled: as the baseline has it unless told otherwise. */
export function customResource(
  fields: { status?: unknown; generation?: number; resourceVersion?: string } = {},
): KubeObject {
  return {
    apiVersion: `${CR_GROUP}/${contract.customResource.version}`,
    kind: "WebApp",
    metadata: {
      name: "hello",
      namespace: "ns",
      generation: fields.generation ?? 1,
      resourceVersion: fields.resourceVersion ?? "30",
    },
    status: "status" in fields ? fields.status : readyStatus,
  };
}

/** The children as they still are: same uid, same generation. */
export function unchanged(children: readonly ChildRecord[]): ChildNow[] {
  return children.map((c) => ({
    ref: c.ref,
    gone: false,
    uid: c.uid,
    ...(c.generation === undefined ? {} : { generation: c.generation }),
  }));
}

/** A settled scenario in which nothing happened after the baseline unless told otherwise. */
export function settled(overrides: Partial<SettledObservation> = {}): SettledObservation {
  const ref = overrides.reference ?? reference();
  return {
    outcome: "settled",
    reference: ref,
    after: [],
    customResourceTouch: writeEntry({
      seq: 25,
      actor: "kit",
      verb: "patch",
      group: CR_GROUP,
      resource: "webapps",
      name: "hello",
      resourceVersion: "30",
    }),
    settled: customResource(),
    liveChildren: [...ref.children],
    referenceChildrenNow: unchanged(ref.children),
    ...overrides,
  };
}

/** A scenario that never fell quiet. */
export function neverQuiet(overrides: Partial<NeverQuietObservation> = {}): NeverQuietObservation {
  return {
    outcome: "never-quiet",
    message: "no convergence after the touches within 60 s: Ready; last operator write 12 ms ago",
    notes: ["operator: reconciling"],
    writes: [],
    ready: true,
    children: [deployment, service],
    ...overrides,
  };
}

/** A mark of the operator's clock: a tick 5 s after its last write, a delayed requeue pending. */
export const TICK_MARK = {
  quietSinceSeq: 22,
  quietSince: "2026-12-07T12:00:00.000Z",
  afterMs: 5_000,
  by: "queues" as const,
  pending: "its last reconcile asked for a delayed requeue (RequeueAfter)",
};

/** A tick of the operator's own clock: it creates ConfigMap ns/web-tick-1, then records it in status. */
export const tickCreate = writeEntry({
  seq: 23,
  time: "2026-12-07T12:00:05.000Z",
  verb: "create",
  group: "",
  resource: "configmaps",
  name: "web-tick-1",
  code: 201,
  effect: "created",
  clock: TICK_MARK,
});
export const tickStatus = statusWrite({
  seq: 24,
  time: "2026-12-07T12:00:05.030Z",
  changedPaths: ["status.lastTick"],
  clock: { ...TICK_MARK, firing: 23 },
});
/** A heartbeat: a clock write that creates nothing, only restamps status. */
export const heartbeat = statusWrite({
  seq: 25,
  time: "2026-12-07T12:00:08.000Z",
  changedPaths: ["status.lastHeartbeatTime"],
  clock: TICK_MARK,
});
