import { describe, expect, it } from "vitest";
import type { Contract } from "../../../../src/contract/load-contract.js";
import type { ChildRoles } from "../../../../src/scenario/child-roles.js";
import type { LiveChild } from "../../../../src/scenario/reference-state.js";
import {
  updateEqualsCreation,
  type UpdateEqualsCreationObservation,
} from "../../../../src/suites/differential/update-equals-creation.js";
import { conditionDifferences } from "../../../../src/suites/differential/compare-ends.js";
import { managedFieldPairs } from "../../../../src/suites/shared/managed-field-pairs.js";
import { exampleContract } from "../staleness/staleness-fixtures.js";

/**
 * Hand-built children with the managedFields a real API server records for
 * the operator's writes: what the comparison of every managed field reads.
 */

interface DeploymentShape {
  readonly port?: number;
  readonly args?: readonly string[];
  readonly annotations?: Record<string, string>;
}

function child(
  kind: string,
  resource: string,
  name: string,
  ns: string,
  body: Record<string, unknown>,
  fieldsV1: unknown,
): LiveChild {
  const uid = `${ns}-${name}-uid`;
  const group = kind === "Deployment" ? "apps" : "";
  return {
    ref: { apiVersion: group ? `${group}/v1` : "v1", kind, name, namespace: ns },
    group,
    resource,
    uid,
    resourceVersion: "10",
    object: {
      apiVersion: group ? `${group}/v1` : "v1",
      kind,
      metadata: {
        name,
        namespace: ns,
        uid,
        resourceVersion: "10",
        ...((body.metadata as object | undefined) ?? {}),
        managedFields: [
          { manager: "webapp-operator", operation: "Update", fieldsType: "FieldsV1", fieldsV1 },
          // The Deployment controller's fields, never the operator's.
          {
            manager: "kube-controller-manager",
            operation: "Update",
            fieldsV1: { "f:status": { "f:replicas": {} } },
          },
        ],
      },
      ...Object.fromEntries(Object.entries(body).filter(([k]) => k !== "metadata")),
    },
  };
}

function deployment(ns: string, shape: DeploymentShape = {}): LiveChild {
  const { port = 9090, args = ["--greeting=bonjour"], annotations } = shape;
  return child(
    "Deployment",
    "deployments",
    "hello",
    ns,
    {
      ...(annotations ? { metadata: { annotations } } : {}),
      spec: {
        replicas: 2,
        template: {
          spec: {
            containers: [
              { name: "sidecar", image: "busybox" },
              {
                name: "app",
                image: "pause",
                args,
                ports: [{ name: "http", containerPort: port, protocol: "TCP" }],
              },
            ],
          },
        },
      },
      status: { replicas: 2 },
    },
    {
      ...(annotations
        ? {
            "f:metadata": {
              "f:annotations": Object.fromEntries(Object.keys(annotations).map((k) => [`f:${k}`, {}])),
            },
          }
        : {}),
      "f:spec": {
        "f:replicas": {},
        "f:template": {
          "f:spec": {
            "f:containers": {
              'k:{"name":"app"}': {
                ".": {},
                "f:image": {},
                "f:args": {},
                "f:name": {},
                "f:ports": {
                  [`k:{"containerPort":${port},"protocol":"TCP"}`]: {
                    ".": {},
                    "f:containerPort": {},
                    "f:name": {},
                    "f:protocol": {},
                  },
                },
              },
            },
          },
        },
      },
    },
  );
}

/** The registration: named from the custom resource's UID, its data the operator's. */
function registration(ns: string, data: Record<string, string>): LiveChild {
  const crUid = `${ns === "ref" ? "aaaaaaaa" : "bbbbbbbb"}-1111-2222-3333-444444444444`;
  return child(
    "ConfigMap",
    "configmaps",
    `registration-${crUid}`,
    ns,
    { data },
    { "f:data": Object.fromEntries(Object.keys(data).map((k) => [`f:${k}`, {}])) },
  );
}

function secret(ns: string, password: string): LiveChild {
  return child(
    "Secret",
    "secrets",
    "hello-auth",
    ns,
    { data: { user: "d2ViYXBw", password } },
    { "f:data": { "f:user": {}, "f:password": {} } },
  );
}

const READY = {
  conditions: [{ type: "Ready", status: "True", lastTransitionTime: "t1", observedGeneration: 3 }],
};
const DATA = { owner: "hello", port: "9090" };

function observation(
  changes: Partial<UpdateEqualsCreationObservation> = {},
): UpdateEqualsCreationObservation {
  return {
    spec: 2,
    bornWith: { port: 9090 },
    reference: {
      children: [deployment("ref"), registration("ref", DATA)],
      customResource: { status: READY, generation: 3 },
    },
    learnedFrom: [deployment("ref", { port: 8080, args: ["--greeting=hello"] }), registration("ref", DATA)],
    live: [deployment("here"), registration("here", DATA)],
    customResource: {
      status: {
        conditions: [{ type: "Ready", status: "True", lastTransitionTime: "t9", observedGeneration: 1 }],
      },
      generation: 1,
    },
    writes: [],
    convergedBy: ["ready and quiet"],
    operatorLog: [],
    ...changes,
  };
}

const SECRET_ROLES: ChildRoles = {
  roles: [
    {
      kind: "Secret",
      group: "",
      resource: "secrets",
      key: "Secret/hello-auth",
      name: "hello-auth",
      names: ["hello-auth"],
      perLife: [["data", "password"]],
    },
  ],
  unpaired: [],
};

async function judge(o: UpdateEqualsCreationObservation, edit: (c: Contract) => Contract = (c) => c) {
  return updateEqualsCreation.judge(o, edit(await exampleContract()));
}

describe("differential/update-equals-creation judge", () => {
  it.each([
    {
      name: "both paths end alike (UIDs, namespaces and generations aside)",
      observation: observation(),
      status: "passed",
      message:
        "created with update 2's spec, it ended as the custom resource updated to it: 2 child(ren) alike in every field it manages, and the same condition statuses",
    },
    {
      name: "a container port the operator set only when it created the Deployment",
      observation: observation({
        reference: {
          ...observation().reference,
          children: [deployment("ref", { port: 8080 }), registration("ref", DATA)],
        },
      }),
      status: "failed",
      message:
        "created with update 2's spec, it ended unlike the custom resource updated to it: 1 managed field(s) differ from the reference",
    },
    {
      name: "a key the update path added and never pruned",
      observation: observation({
        reference: {
          ...observation().reference,
          children: [deployment("ref"), registration("ref", { ...DATA, greeting: "hello" })],
        },
      }),
      status: "failed",
      message:
        "created with update 2's spec, it ended unlike the custom resource updated to it: 1 managed field(s) differ from the reference",
    },
    {
      name: "a child the creation path lacks",
      observation: observation({ live: [deployment("here")] }),
      status: "failed",
      message:
        "created with update 2's spec, it ended unlike the custom resource updated to it: missing ConfigMap/registration-<uid>",
    },
    {
      name: "a condition with another status",
      observation: observation({
        customResource: { status: { conditions: [{ type: "Ready", status: "False" }] }, generation: 1 },
      }),
      status: "failed",
      message:
        "created with update 2's spec, it ended unlike the custom resource updated to it: 1 condition(s) with another status than the reference's",
    },
    {
      name: "a password generated once per life differs, as it must",
      observation: observation({
        roles: SECRET_ROLES,
        reference: { ...observation().reference, children: [deployment("ref"), secret("ref", "cGFzczE=")] },
        learnedFrom: [deployment("ref"), secret("ref", "cGFzczA=")],
        live: [deployment("here"), secret("here", "cGFzczI=")],
      }),
      status: "passed",
      message:
        "created with update 2's spec, it ended as the custom resource updated to it: 2 child(ren) alike in every field it manages, and the same condition statuses",
    },
    {
      name: "a value differs at a child the fault-free lives of the sample never made",
      observation: observation({
        reference: { ...observation().reference, children: [deployment("ref"), secret("ref", "cGFzczE=")] },
        learnedFrom: [deployment("ref")],
        live: [deployment("here"), secret("here", "cGFzczI=")],
      }),
      status: "inconclusive",
      message:
        "Secret/hello-auth data.password differ from the updated custom resource's, at fields the two fault-free lives of the sample never had: a value generated once per life there cannot be told from a wrong one",
    },
  ])("$name: $status", async ({ observation: o, status, message }) => {
    const verdict = await judge(o);
    expect({ status: verdict.status, message: verdict.message }).toEqual({ status, message });
  });

  it("names the field that differs, with both values", async () => {
    const verdict = await judge(
      observation({
        reference: {
          ...observation().reference,
          children: [deployment("ref", { port: 8080 }), registration("ref", DATA)],
        },
      }),
    );
    expect(verdict.evidence?.diffs).toEqual([
      {
        object: "Deployment/hello",
        path: "spec.template.spec.containers[name=app].ports[name=http].containerPort",
        expected: 8080,
        actual: 9090,
        sides: { expected: "updated to the spec", actual: "created with the spec" },
      },
    ]);
    // The spec it was born with names 9090: the side created with it has it, the updated one kept 8080.
    expect(verdict.evidence?.notes).toContain(
      "Deployment/hello spec.template.spec.containers[name=app].ports[name=http].containerPort: the spec asks for 9090 (spec.port); the side created with the spec has it",
    );
  });

  it("says when the operator itself reported not carrying the update out on the updated path", async () => {
    const refused = {
      conditions: [
        { type: "Ready", status: "True" },
        {
          type: "ReconcileSuccess",
          status: "False",
          reason: "UnsupportedOperation",
          message: "scale-down is not supported",
        },
      ],
    };
    const verdict = await judge(
      observation({
        reference: {
          ...observation().reference,
          children: [deployment("ref", { port: 8080 }), registration("ref", DATA)],
          customResource: { status: refused },
        },
      }),
    );
    expect(verdict.status).toBe("failed");
    expect(verdict.message).toMatch(
      /; the operator itself reported not carrying the update out on the updated path: ReconcileSuccess=False \(UnsupportedOperation: scale-down is not supported\); if it refuses this change by design, waive this verdict with that reason$/,
    );
  });

  it("shows an unpruned key as present in the reference only", async () => {
    const verdict = await judge(
      observation({
        reference: {
          ...observation().reference,
          children: [deployment("ref"), registration("ref", { ...DATA, greeting: "hello" })],
        },
      }),
    );
    expect(verdict.evidence?.diffs).toEqual([
      {
        object: "ConfigMap/registration-<uid>",
        path: "data.greeting",
        expected: "hello",
        actual: undefined,
        sides: { expected: "updated to the spec", actual: "created with the spec" },
      },
    ]);
  });

  it("leaves out a field the contract declares volatile, with a note", async () => {
    const o = observation({
      reference: {
        ...observation().reference,
        children: [
          deployment("ref", { annotations: { "demo/restarted-at": "t1" } }),
          registration("ref", DATA),
        ],
      },
      live: [deployment("here", { annotations: { "demo/restarted-at": "t2" } }), registration("here", DATA)],
      learnedFrom: [
        deployment("ref", { annotations: { "demo/restarted-at": "t0" } }),
        registration("ref", DATA),
      ],
    });
    expect((await judge(o)).status).toBe("failed");
    const verdict = await judge(o, (c) => ({
      ...c,
      promises: [
        {
          rule: "promises[0]",
          kind: "Deployment",
          keeps: ["uid", "resourceVersion", "generation"],
          volatile: [
            {
              path: [{ field: "metadata" }, { field: "annotations" }, { field: "demo/restarted-at" }],
              text: "metadata.annotations.demo/restarted-at",
              reason: "stamped on every rollout",
              rule: "promises[0]",
            },
          ],
        },
      ],
    }));
    expect(verdict.status).toBe("passed");
    expect(verdict.evidence?.notes).toContain(
      'not compared: Deployment/hello metadata.annotations["demo/restarted-at"], volatile: metadata.annotations.demo/restarted-at (promises[0]: stamped on every rollout)',
    );
  });
});

describe("conditionDifferences", () => {
  it("compares the conditions both report, notes the others", () => {
    expect(
      conditionDifferences(
        {
          conditions: [
            { type: "Ready", status: "True" },
            { type: "Upgraded", status: "True" },
          ],
        },
        {
          conditions: [
            { type: "Ready", status: "True" },
            { type: "Degraded", status: "False" },
          ],
        },
      ),
    ).toEqual({
      diffs: [],
      oneSided: [
        "condition Upgraded=True only on the updated custom resource (not compared)",
        "condition Degraded=False only on the one created with the spec (not compared)",
      ],
    });
  });
});

describe("managedFieldPairs", () => {
  it("finds each managed field in both objects by what its list elements are, whatever their positions", () => {
    const a = deployment("ref", { port: 8080 }).object as {
      spec: { template: { spec: { containers: unknown[] } } };
    };
    const b = structuredClone(deployment("here").object) as typeof a;
    b.spec.template.spec.containers.reverse();
    const pairs = managedFieldPairs(a, b).map((p) => [p.expected?.join("."), p.actual?.join(".")]);
    expect(pairs).toContainEqual([
      "spec.template.spec.containers.1.ports.0.containerPort",
      "spec.template.spec.containers.0.ports.0.containerPort",
    ]);
    // The controller's status fields are not the operator's.
    expect(pairs.some(([e]) => e?.startsWith("status"))).toBe(false);
  });

  it("pairs a field one object lacks with nothing", () => {
    const pairs = managedFieldPairs(
      registration("ref", { owner: "hello", stale: "x" }).object,
      registration("here", { owner: "hello" }).object,
    );
    expect(pairs.map((p) => ({ path: p.expected?.join("."), other: p.actual?.join(".") }))).toEqual([
      { path: "data.owner", other: "data.owner" },
      { path: "data.stale", other: undefined },
    ]);
  });
});

describe("an update the operator did not carry out: the recovery oracle", () => {
  const notCarriedOut = {
    why: "the custom resource was not ready within 60s",
    previous: "update 2",
  };
  const recovery = (changes: Partial<UpdateEqualsCreationObservation> = {}) =>
    observation({
      spec: 4,
      updateName: "generated update 4 (spec.deploymentName: removed)",
      notCarriedOut,
      ...changes,
    });

  it("passes when the previous spec written back brings it back to that spec's reference", async () => {
    const verdict = await judge(recovery());
    expect(verdict.status).toBe("passed");
    expect(verdict.message).toBe(
      "the operator did not carry generated update 4 (spec.deploymentName: removed) out (the custom resource was not ready within 60s): no update-equals-creation verdict on it; with the spec of update 2 written back it came back to that spec's reference (2 child(ren) alike, the same condition statuses)",
    );
  });

  it("fails when it comes back elsewhere, the sides named", async () => {
    const verdict = await judge(
      recovery({ live: [deployment("here", { port: 8080 }), registration("here", DATA)] }),
    );
    expect(verdict.status).toBe("failed");
    expect(verdict.message).toMatch(/written back it did not come back to that spec's reference: /);
    expect(verdict.evidence?.diffs?.[0]?.sides).toEqual({
      expected: "the reference of update 2",
      actual: "come back to it",
    });
  });

  it("fails when the previous spec written back does not converge either", async () => {
    const verdict = await judge(
      recovery({ notCarriedOut: { ...notCarriedOut, notRecovered: "not ready within 60s" } }),
    );
    expect(verdict.status).toBe("failed");
    expect(verdict.message).toMatch(
      /with the spec of update 2 written back it did not converge again: not ready within 60s$/,
    );
  });
});

describe("a generated spec the operator never converges on when created with it", () => {
  it("is skipped with why: there is nothing to compare the updated custom resource with", async () => {
    const verdict = await judge(
      observation({
        spec: 5,
        updateName: "generated update 5 (spec.deploymentName: removed)",
        live: [],
        bornNeverConverged: "no convergence within 60 s",
      }),
    );
    expect(verdict.status).toBe("skipped");
    expect(verdict.message).toBe(
      "a custom resource created with generated update 5 (spec.deploymentName: removed)'s spec never converged (no convergence within 60 s): the operator does not carry that made-up spec out from a creation, so the updated one has nothing to be compared with",
    );
  });
});
