import { describe, expect, it } from "vitest";
import { secretHash } from "../../../../src/proxy/secret-redaction.js";
import { learnRoles } from "../../../../src/scenario/child-roles.js";
import type { LiveChild } from "../../../../src/scenario/reference-state.js";
import {
  compareEndStates,
  endStateMatches,
  unpairedVerdict,
} from "../../../../src/suites/shared/end-state.js";
import { writeEntry } from "../../../support/write-entry.js";

const b64 = (text: string) => Buffer.from(text).toString("base64");

/** A Secret the operator made: data.password and data.user, both fields it manages. */
function secret(name: string, namespace: string, password: string, user = "admin"): LiveChild {
  return {
    ref: { apiVersion: "v1", kind: "Secret", name, namespace },
    group: "",
    resource: "secrets",
    uid: `uid-${name}`,
    resourceVersion: "3",
    object: {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name,
        namespace,
        managedFields: [
          {
            manager: "orders-operator",
            operation: "Update",
            fieldsType: "FieldsV1",
            fieldsV1: { "f:data": { "f:password": {}, "f:user": {} } },
          },
        ],
      },
      data: { password: b64(password), user: b64(user) },
    },
  };
}

const life = (child: LiveChild) => ({
  namespace: child.ref.namespace ?? "",
  children: [{ kind: "Secret", group: "", resource: "secrets", name: child.ref.name, object: child.object }],
});

// Two fault-free lives of an operator that names its Secret from a UID prefix and generates its password.
const FIRST = secret("orders-auth-1a2b3c4d", "ref-a", "first-password");
const SECOND = secret("orders-auth-9f8e7d6c", "ref-b", "second-password");
const roles = learnRoles(life(FIRST), life(SECOND));
const DRIFT = { include: [], exclude: [] };

/** The operator's write of this Secret as the write log has it: what it changed. */
const secretWrite = (
  seq: number,
  name: string,
  verb: "create" | "update" = "create",
  changedPaths?: string[],
) =>
  writeEntry({
    seq,
    verb,
    group: "",
    resource: "secrets",
    name,
    code: verb === "create" ? 201 : 200,
    effect: verb === "create" ? "created" : "changed",
    ...(changedPaths ? { changedPaths } : {}),
  });

describe("compareEndStates by role", () => {
  it("pairs a child named from another life's identity, and does not compare its generated password across lives", () => {
    const here = secret("orders-auth-55aa55aa", "scenario", "third-password");
    const comparison = compareEndStates([here], [FIRST], DRIFT, {
      roles,
      writes: [secretWrite(4, here.ref.name)],
    });
    expect(comparison).toMatchObject({
      missing: [],
      duplicates: [],
      diffs: [],
      regenerated: [],
      unpaired: [],
    });
    expect(endStateMatches(comparison)).toBe(true);
  });

  it("still compares what both lives agree on", () => {
    const here = secret("orders-auth-55aa55aa", "scenario", "third-password", "root");
    const comparison = compareEndStates([here], [FIRST], DRIFT, { roles });
    expect(comparison.diffs).toEqual([
      {
        object: "Secret/orders-auth-*",
        path: "data.user",
        expected: secretHash(b64("admin")),
        actual: secretHash(b64("root")),
      },
    ]);
  });

  it("finds a generated value written anew within one life: regenerated, not kept", () => {
    const here = secret("orders-auth-55aa55aa", "scenario", "after-the-crash");
    const comparison = compareEndStates([here], [FIRST], DRIFT, {
      roles,
      writes: [
        secretWrite(4, here.ref.name),
        secretWrite(9, here.ref.name, "update", ["data.password", "metadata.labels.x"]),
      ],
    });
    expect(endStateMatches(comparison)).toBe(false);
    expect(comparison.regenerated).toEqual([
      "Secret/orders-auth-* data.password: changed by write 9 after its create (write 4), though two fault-free lives show it is generated once per life",
    ]);
  });

  it("allows one change after the create when the reference lives fill the value in after creating the child", () => {
    const lives = (name: string, namespace: string, password: string) => ({
      ...life(secret(name, namespace, password)),
      writes: [secretWrite(1, name), secretWrite(2, name, "update", ["data.password"])],
    });
    const filling = learnRoles(
      lives("orders-auth-1a2b3c4d", "ref-a", "p1"),
      lives("orders-auth-9f8e7d6c", "ref-b", "p2"),
    );
    const here = secret("orders-auth-55aa55aa", "scenario", "p3");
    const once = [secretWrite(4, here.ref.name), secretWrite(5, here.ref.name, "update", ["data.password"])];
    expect(compareEndStates([here], [FIRST], DRIFT, { roles: filling, writes: once }).regenerated).toEqual(
      [],
    );
    const twice = [...once, secretWrite(8, here.ref.name, "update", ["data.password"])];
    expect(
      compareEndStates([here], [FIRST], DRIFT, { roles: filling, writes: twice }).regenerated,
    ).toHaveLength(1);
  });

  it("counts no change the operator made after the kit changed the value: a repair", () => {
    const here = secret("orders-auth-55aa55aa", "scenario", "p3");
    const writes = [
      secretWrite(4, here.ref.name),
      { ...secretWrite(6, here.ref.name, "update", ["data.password"]), actor: "kit" as const },
      secretWrite(7, here.ref.name, "update", ["data.password"]),
    ];
    expect(compareEndStates([here], [FIRST], DRIFT, { roles, writes }).regenerated).toEqual([]);
  });

  it("cannot tell a child whose name fits no role from the one the reference has: unpaired, inconclusive, never missing", () => {
    const here = secret("orders-credentials", "scenario", "x");
    const comparison = compareEndStates([here], [FIRST], DRIFT, { roles });
    expect(comparison.missing).toEqual([]);
    expect(comparison.unpaired).toEqual([
      {
        reference: "Secret/orders-auth-*",
        live: ["Secret/orders-credentials"],
        why: "its name varies with the life (orders-auth-* in two fault-free lives), and no child here fits that",
      },
    ]);
    expect(endStateMatches(comparison)).toBe(true);
    const verdict = unpairedVerdict(comparison);
    expect(verdict?.status).toBe("inconclusive");
    expect(verdict?.message).toContain(
      "Secret/orders-auth-* (reference) or Secret/orders-credentials (here)",
    );
  });

  it("counts a child whose name both lives had the same as missing when it is not here", () => {
    const fixedRoles = learnRoles(
      life(secret("orders-auth", "ref-a", "p1")),
      life(secret("orders-auth", "ref-b", "p2")),
    );
    const comparison = compareEndStates(
      [secret("orders-credentials", "scenario", "x")],
      [secret("orders-auth", "ref-a", "p1")],
      DRIFT,
      { roles: fixedRoles },
    );
    expect(comparison.missing).toEqual(["Secret/orders-auth"]);
    expect(comparison.unpaired).toEqual([]);
  });

  it("counts duplicates whatever their names: two Secrets where the reference has one", () => {
    const comparison = compareEndStates(
      [secret("orders-auth-55aa55aa", "scenario", "a"), secret("orders-auth-66bb66bb", "scenario", "b")],
      [FIRST],
      DRIFT,
      { roles },
    );
    expect(comparison.duplicates).toMatchObject([{ kind: "Secret", reference: 1, now: 2 }]);
  });

  it("without roles (an observation recorded before them) compares names normalised, as before", () => {
    const comparison = compareEndStates(
      [secret("orders-auth-55aa55aa", "scenario", "first-password")],
      [FIRST],
      DRIFT,
    );
    expect(comparison.missing).toEqual(["Secret/orders-auth-1a2b3c4d"]);
    expect(comparison.unpaired).toEqual([]);
  });

  it("judges a generated value inside a managed list on its own: the rest of the list still compares", () => {
    const deployment = (namespace: string, password: string, level: string): LiveChild => ({
      ref: { apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace },
      group: "apps",
      resource: "deployments",
      uid: `uid-web-${namespace}`,
      resourceVersion: "3",
      object: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace },
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: "web",
                  image: "web:1",
                  env: [
                    { name: "PASSWORD", value: password },
                    { name: "LOG_LEVEL", value: level },
                  ],
                },
              ],
            },
          },
        },
      },
    });
    const lifeOf = (c: LiveChild) => ({
      namespace: c.ref.namespace ?? "",
      children: [
        { kind: c.ref.kind, group: c.group, resource: c.resource, name: c.ref.name, object: c.object },
      ],
    });
    const reference = deployment("ref-a", "p1", "info");
    const envRoles = learnRoles(lifeOf(reference), lifeOf(deployment("ref-b", "p2", "info")));
    expect(envRoles.roles[0]?.perLife).toEqual([
      ["spec", "template", "spec", "containers", 0, "env", 0, "value"],
    ]);
    // Only the generated variable differs: the env list matches.
    expect(
      compareEndStates([deployment("here", "p3", "info")], [reference], DRIFT, { roles: envRoles }).diffs,
    ).toEqual([]);
    // Another variable differs: the env list does not, generated value or not.
    expect(
      compareEndStates([deployment("here", "p3", "debug")], [reference], DRIFT, { roles: envRoles }).diffs,
    ).toMatchObject([{ object: "Deployment/web", path: "spec.template.spec.containers[0].env" }]);
  });

  it("finds a generated variable by its name in a later spec's env list that has one more variable before it", () => {
    const deployment = (namespace: string, env: { name: string; value: string }[]): LiveChild => ({
      ref: { apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace },
      group: "apps",
      resource: "deployments",
      uid: `uid-web-${namespace}`,
      resourceVersion: "3",
      object: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace },
        spec: { template: { spec: { containers: [{ name: "web", image: "web:1", env }] } } },
      },
    });
    const lifeOf = (c: LiveChild) => ({
      namespace: c.ref.namespace ?? "",
      children: [
        { kind: c.ref.kind, group: c.group, resource: c.resource, name: c.ref.name, object: c.object },
      ],
    });
    const spec0 = (namespace: string, password: string) =>
      deployment(namespace, [
        { name: "LOG_LEVEL", value: "info" },
        { name: "PASSWORD", value: password },
      ]);
    // Spec 0's lives learn the password at env[1]; the update puts a variable first, so it is at env[2].
    const envRoles = learnRoles(lifeOf(spec0("ref-a", "p1")), lifeOf(spec0("ref-b", "p2")));
    const spec1 = (namespace: string, password: string, level = "info") =>
      deployment(namespace, [
        { name: "REGION", value: "eu" },
        { name: "LOG_LEVEL", value: level },
        { name: "PASSWORD", value: password },
      ]);
    const later = spec1("ref-c", "p3");
    expect(compareEndStates([spec1("here", "p4")], [later], DRIFT, { roles: envRoles }).diffs).toEqual([]);
    expect(
      compareEndStates([spec1("here", "p4", "debug")], [later], DRIFT, { roles: envRoles }).diffs,
    ).toMatchObject([{ object: "Deployment/web", path: "spec.template.spec.containers[0].env" }]);
    // A regeneration is found at the variable's place in this life's list.
    const regenerated = compareEndStates([spec1("here", "p4")], [later], DRIFT, {
      roles: envRoles,
      writes: [
        writeEntry({ seq: 3, verb: "create", name: "web", code: 201, effect: "created" }),
        writeEntry({
          seq: 7,
          name: "web",
          effect: "changed",
          changedPaths: ["spec.template.spec.containers[name=web].env[name=PASSWORD].value"],
        }),
      ],
    }).regenerated;
    expect(regenerated).toHaveLength(1);
    expect(regenerated[0]).toContain(
      "Deployment/web spec.template.spec.containers[name=web].env[name=PASSWORD].value: changed by write 7",
    );
  });

  it("with roles from one life only, cannot tell a missing child from a renamed one of its kind: unpaired, with why", () => {
    const oneLife = {
      ...learnRoles(life(FIRST), life(FIRST)),
      oneLife: "the second reference life did not converge (timeout)",
    };
    const here = secret("orders-auth-55aa55aa", "scenario", "third-password");
    const comparison = compareEndStates([here], [FIRST], DRIFT, { roles: oneLife });
    expect(comparison.missing).toEqual([]);
    expect(comparison.unpaired).toEqual([
      {
        reference: "Secret/orders-auth-1a2b3c4d",
        live: ["Secret/orders-auth-55aa55aa"],
        why: "the second reference life did not converge (timeout), so the kit could not learn whether Secret names vary with the life",
      },
    ]);
    // Nothing of its kind here: plainly missing.
    expect(compareEndStates([], [FIRST], DRIFT, { roles: oneLife }).missing).toEqual([
      "Secret/orders-auth-1a2b3c4d",
    ]);
    // A password of its own in this life: maybe generated once per life, maybe wrong; not a failure.
    const samePlace = secret("orders-auth-1a2b3c4d", "scenario", "third-password");
    const values = compareEndStates([samePlace], [FIRST], DRIFT, { roles: oneLife });
    expect(values.diffs).toEqual([]);
    expect(values.undecided).toMatchObject([
      { object: "Secret/orders-auth-1a2b3c4d", path: "data.password" },
    ]);
    expect(endStateMatches(values)).toBe(true);
    const verdict = unpairedVerdict(values);
    expect(verdict?.status).toBe("inconclusive");
    expect(verdict?.message).toBe(
      "Secret/orders-auth-1a2b3c4d data.password differ from the reference, but with one reference life the kit cannot tell a value generated once per life from a wrong one",
    );
    expect(verdict?.evidence?.diffs).toHaveLength(1);
  });

  it("counts a value the create left unset and a later write filled in as generated once, not regenerated", () => {
    const here = secret("orders-auth-55aa55aa", "scenario", "p3");
    const created = (body: unknown) => ({ ...secretWrite(4, here.ref.name), body });
    const fill = secretWrite(6, here.ref.name, "update", ["data.password"]);
    // A stale view: this life created the Secret without its password and filled it in next.
    const unset = compareEndStates([here], [FIRST], DRIFT, {
      roles,
      writes: [created({ kind: "Secret", data: { user: "x" } }), fill],
    });
    expect(unset.regenerated).toEqual([]);
    // Created with its password: the same change is a regeneration.
    const set = compareEndStates([here], [FIRST], DRIFT, {
      roles,
      writes: [created({ kind: "Secret", data: { password: "hmac:1", user: "x" } }), fill],
    });
    expect(set.regenerated).toHaveLength(1);
    // Created from stringData: the server set data.password at the create.
    const fromStringData = compareEndStates([here], [FIRST], DRIFT, {
      roles,
      writes: [created({ kind: "Secret", stringData: { password: "hmac:1" } }), fill],
    });
    expect(fromStringData.regenerated).toHaveLength(1);
  });

  it("counts the operator's second change after a kit write: one repair, then a regeneration", () => {
    const here = secret("orders-auth-55aa55aa", "scenario", "p3");
    const writes = [
      secretWrite(4, here.ref.name),
      { ...secretWrite(6, here.ref.name, "update", ["data.password"]), actor: "kit" as const },
      secretWrite(7, here.ref.name, "update", ["data.password"]),
      secretWrite(9, here.ref.name, "update", ["data.password"]),
    ];
    expect(compareEndStates([here], [FIRST], DRIFT, { roles, writes }).regenerated).toEqual([
      "Secret/orders-auth-* data.password: changed by write 9 after its create (write 4), though two fault-free lives show it is generated once per life",
    ]);
  });

  it("reads only the writes of the object as it is now: a predecessor of the same name is another life's", () => {
    const here = secret("orders-auth-55aa55aa", "scenario", "p3");
    const writes = [
      { ...secretWrite(4, here.ref.name), uid: "uid-old" },
      { ...secretWrite(5, here.ref.name, "update", ["data.password"]), uid: "uid-old" },
      { ...secretWrite(8, here.ref.name), uid: here.uid },
    ];
    expect(compareEndStates([here], [FIRST], DRIFT, { roles, writes }).regenerated).toEqual([]);
  });

  it("counts a later spec's child the roles never saw as missing, unless a child of its kind here shares its fixed text", () => {
    const laterChild = secret("orders-tls-77aa77aa", "ref-c", "p");
    const unrelated = compareEndStates(
      [secret("orders-auth-55aa55aa", "scenario", "p3"), secret("zookeeper", "scenario", "z")],
      [secret("orders-auth-1a2b3c4d", "ref-c", "p"), laterChild],
      DRIFT,
      { roles },
    );
    expect(unrelated.missing).toEqual(["Secret/orders-tls-77aa77aa"]);
    const related = compareEndStates(
      [secret("orders-auth-55aa55aa", "scenario", "p3"), secret("orders-tls-00bb00bb", "scenario", "z")],
      [secret("orders-auth-1a2b3c4d", "ref-c", "p"), laterChild],
      DRIFT,
      { roles },
    );
    expect(related.missing).toEqual([]);
    expect(related.unpaired).toMatchObject([
      { reference: "Secret/orders-tls-77aa77aa", live: ["Secret/orders-tls-00bb00bb"] },
    ]);
  });

  it("counts a child of a fixed name as missing even when other names of its kind could not be paired", () => {
    const lifeOf = (namespace: string, names: string[]) => ({
      namespace,
      children: names.map((name) => ({
        kind: "Secret",
        group: "",
        resource: "secrets",
        name,
        object: secret(name, namespace, "p").object,
      })),
    });
    // Two varying names in one life, one in the other: unpaired; "orders-config" is fixed.
    const mixed = learnRoles(
      lifeOf("ref-a", ["orders-config", "orders-a-1111", "orders-b-2222"]),
      lifeOf("ref-b", ["orders-config", "orders-a-3333"]),
    );
    expect(mixed.unpaired).toHaveLength(1);
    const comparison = compareEndStates(
      [secret("orders-a-4444", "scenario", "p")],
      [secret("orders-config", "ref-a", "p")],
      DRIFT,
      { roles: mixed },
    );
    expect(comparison.missing).toEqual(["Secret/orders-config"]);
    // A later spec's child of that kind, with a name of its own life: which it is cannot be told.
    const later = compareEndStates(
      [secret("orders-c-5555", "scenario", "p")],
      [secret("orders-z-6666", "ref-c", "p")],
      DRIFT,
      { roles: mixed },
    );
    expect(later.missing).toEqual([]);
    expect(later.unpaired).toMatchObject([
      { reference: "Secret/orders-z-6666", live: ["Secret/orders-c-5555"] },
    ]);
  });

  it("finds a generated value inside a keyed list written anew, by the list's key as the write log names it", () => {
    const withEnv = (name: string, namespace: string, password: string): LiveChild => {
      const base = secret(name, namespace, password);
      const object = base.object as Record<string, unknown>;
      return {
        ...base,
        object: {
          ...object,
          spec: {
            env: [
              { name: "LEVEL", value: "info" },
              { name: "TOKEN", value: password },
            ],
          },
        },
      };
    };
    const driftEnv = { include: ["Secret/spec.env"], exclude: [] };
    const lifeOf = (c: LiveChild) => ({ ...life(c) });
    const envRoles = learnRoles(
      lifeOf(withEnv("orders-auth-1a2b3c4d", "ref-a", "t1")),
      lifeOf(withEnv("orders-auth-9f8e7d6c", "ref-b", "t2")),
    );
    const here = withEnv("orders-auth-55aa55aa", "scenario", "t3");
    const regenerated = (changed: string) =>
      compareEndStates([here], [withEnv("orders-auth-1a2b3c4d", "ref-a", "t1")], driftEnv, {
        roles: envRoles,
        writes: [secretWrite(4, here.ref.name), secretWrite(9, here.ref.name, "update", [changed])],
      }).regenerated;
    expect(regenerated("spec.env[name=TOKEN].value")).toEqual([
      "Secret/orders-auth-* spec.env[name=TOKEN].value: changed by write 9 after its create (write 4), though two fault-free lives show it is generated once per life",
    ]);
    expect(regenerated("spec.env[name=LEVEL].value")).toEqual([]);
  });

  it("counts a Secret value created empty (the write log holds its hash) and filled in later as generated once", () => {
    const here = secret("orders-auth-55aa55aa", "scenario", "p3");
    const writes = [
      {
        ...secretWrite(4, here.ref.name),
        body: { kind: "Secret", data: { password: secretHash(""), user: "x" } },
      },
      secretWrite(6, here.ref.name, "update", ["data.password"]),
    ];
    expect(compareEndStates([here], [FIRST], DRIFT, { roles, writes }).regenerated).toEqual([]);
  });
});

describe("compareEndStates of a cluster-scoped child", () => {
  /** A PersistentVolume (no namespace of its own) bound ahead to a claim in the life's namespace. */
  function volume(claimNamespace: string): LiveChild {
    return {
      ref: { apiVersion: "v1", kind: "PersistentVolume", name: "orders-data" },
      group: "",
      resource: "persistentvolumes",
      uid: `uid-volume-${claimNamespace}`,
      resourceVersion: "2",
      object: {
        apiVersion: "v1",
        kind: "PersistentVolume",
        metadata: {
          name: "orders-data",
          managedFields: [
            {
              manager: "orders-operator",
              operation: "Update",
              fieldsType: "FieldsV1",
              fieldsV1: { "f:spec": { "f:claimRef": { "f:name": {}, "f:namespace": {} } } },
            },
          ],
        },
        spec: { claimRef: { name: "orders-data", namespace: claimNamespace } },
      },
    };
  }
  const lifeOf = (namespace: string, claimNamespace = namespace) => {
    const children = [secret("orders-auth", namespace, "pw"), volume(claimNamespace)];
    return {
      live: children,
      life: {
        namespace,
        children: children.map((c) => ({
          kind: c.ref.kind,
          group: c.group,
          resource: c.resource,
          name: c.ref.name,
          object: c.object,
        })),
      },
    };
  };
  const first = lifeOf("ref-a");
  const clusterRoles = learnRoles(first.life, lifeOf("ref-b").life);

  it("reads the life's namespace in it as its namespaced siblings': the same volume in another life matches", () => {
    const here = lifeOf("scenario").live;
    const comparison = compareEndStates(here, first.live, DRIFT, { roles: clusterRoles });
    expect(comparison.diffs).toEqual([]);
    expect(endStateMatches(comparison)).toBe(true);
  });

  it("still finds a claim in another namespace than the life's", () => {
    const here = lifeOf("scenario", "default").live;
    const comparison = compareEndStates(here, first.live, DRIFT, { roles: clusterRoles });
    expect(comparison.diffs).toEqual([
      {
        object: "PersistentVolume/orders-data",
        path: "spec.claimRef.namespace",
        expected: "ref-a",
        actual: "default",
      },
    ]);
  });
});

describe("compareEndStates of keyed lists in another order", () => {
  // A message-broker operator that writes its client Service's ports from a map: any order.
  const servicePorts = (namespace: string, ports: [string, number][]): LiveChild => ({
    ref: { apiVersion: "v1", kind: "Service", name: "broker-client", namespace },
    group: "",
    resource: "services",
    uid: `uid-${namespace}`,
    resourceVersion: "3",
    object: {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: "broker-client",
        namespace,
        managedFields: [
          {
            manager: "broker-operator",
            operation: "Update",
            fieldsType: "FieldsV1",
            fieldsV1: {
              "f:spec": {
                "f:ports": Object.fromEntries(
                  ports.map(([, port]) => [
                    `k:{"port":${port},"protocol":"TCP"}`,
                    { "f:name": {}, "f:port": {}, "f:targetPort": {} },
                  ]),
                ),
              },
            },
          },
        ],
      },
      spec: {
        ports: ports.map(([name, port]) => ({ name, port, protocol: "TCP", targetPort: port })),
        selector: { app: "broker" },
      },
    },
  });
  const reference = servicePorts("ref-a", [
    ["amqp", 5672],
    ["http", 15672],
    ["prometheus", 15692],
  ]);
  const shuffled = servicePorts("scenario", [
    ["prometheus", 15692],
    ["amqp", 5672],
    ["http", 15672],
  ]);
  const oneLife = (c: LiveChild) => ({
    namespace: c.ref.namespace ?? "",
    children: [{ kind: "Service", group: "", resource: "services", name: c.ref.name, object: c.object }],
  });
  const serviceRoles = learnRoles(oneLife(reference), oneLife(shuffled));

  it.each(["drift-targets", "operator-managed"] as const)(
    "compares ports by name, not position (%s)",
    (fields) => {
      const comparison = compareEndStates([shuffled], [reference], DRIFT, { roles: serviceRoles, fields });
      expect(comparison.diffs).toEqual([]);
      expect(endStateMatches(comparison)).toBe(true);
    },
  );

  it.each(["drift-targets", "operator-managed"] as const)(
    "still finds the port that differs, by its name (%s)",
    (fields) => {
      const changed = servicePorts("scenario", [
        ["prometheus", 15693],
        ["amqp", 5672],
        ["http", 15672],
      ]);
      const comparison = compareEndStates([changed], [reference], DRIFT, { roles: serviceRoles, fields });
      expect(comparison.diffs.map((d) => [d.path, d.expected, d.actual])).toContainEqual(
        expect.arrayContaining([15692, 15693]),
      );
      expect(endStateMatches(comparison)).toBe(false);
    },
  );

  it("learns no per-life value from two lives that wrote the ports in other orders", () => {
    // Read as the scenario reads children (liveChildObjects: key order), the lives agree everywhere.
    expect(serviceRoles.roles.every((r) => r.perLife.length === 0)).toBe(true);
  });
});

describe("compareEndStates of children the operator's clock made", () => {
  // A CronJob-style operator: a Job at each tick of its own schedule, named from the tick.
  const job = (name: string, namespace: string, clock?: boolean): LiveChild => ({
    ref: { apiVersion: "batch/v1", kind: "Job", name, namespace },
    group: "batch",
    resource: "jobs",
    uid: `uid-${name}-${namespace}`,
    resourceVersion: "9",
    object: { apiVersion: "batch/v1", kind: "Job", metadata: { name, namespace }, spec: { parallelism: 1 } },
    ...(clock
      ? {
          madeByClock: {
            seq: 12,
            time: "2026-12-07T12:01:00.004Z",
            clock: {
              quietSinceSeq: 9,
              quietSince: "2026-12-07T12:00:58.100Z",
              afterMs: 1_904,
              by: "queues" as const,
              pending: "its last reconcile asked for a delayed requeue (RequeueAfter)",
            },
          },
        }
      : {}),
  });
  const jobLife = (...children: LiveChild[]) => ({
    namespace: "ref-a",
    children: children.map((c) => ({
      kind: "Job",
      group: "batch",
      resource: "jobs",
      name: c.ref.name,
      object: c.object,
    })),
  });
  const noRoles = learnRoles(jobLife(), jobLife());

  it("leaves out a Job a tick made here when the reference, shorter, saw no tick: a note, no duplicate", () => {
    const comparison = compareEndStates([job("nightly-1796610660", "scenario", true)], [], DRIFT, {
      roles: noRoles,
    });
    expect(comparison.duplicates).toEqual([]);
    expect(endStateMatches(comparison)).toBe(true);
    expect(comparison.clockMade).toEqual([
      expect.stringMatching(
        /^not compared field by field: Job\/nightly-1796610660 \(here\) was made by the operator's clock, write 12 at 12:01:00.004, 1.9 s after the operator's write 9/,
      ),
    ]);
  });

  it("leaves out a Job a tick made in the reference when this life saw no tick: not missing", () => {
    const comparison = compareEndStates([], [job("nightly-1796610600", "ref-a", true)], DRIFT, {
      roles: noRoles,
    });
    expect(comparison.missing).toEqual([]);
    expect(comparison.clockMade).toHaveLength(1);
  });

  it("takes a Job of the same family as one a tick made for the clock's too: a tick that came while the operator was busy", () => {
    const comparison = compareEndStates(
      [job("nightly-1796610660", "scenario"), job("nightly-1796610720", "scenario", true)],
      [job("nightly-1796610600", "ref-a")],
      DRIFT,
      { roles: noRoles },
    );
    expect(endStateMatches(comparison)).toBe(true);
    expect(comparison.clockMade).toHaveLength(3);
    expect(comparison.clockMade[0]).toMatch(/is of a family its clock made \(Job nightly-\*\)/);
  });

  it("compares no field of two ticks' children of one name: another tick's values", () => {
    const here = job("nightly-1", "scenario", true);
    const there = {
      ...job("nightly-1", "ref-a", true),
      object: { ...job("nightly-1", "ref-a").object, spec: { parallelism: 2 } },
    };
    expect(compareEndStates([here], [there], DRIFT, { roles: noRoles }).diffs).toEqual([]);
  });

  it.each<[string, LiveChild[], LiveChild[], boolean]>([
    [
      "as many ticks here as in the reference",
      [job("t-1", "s", true), job("t-2", "s", true)],
      [job("t-1", "r", true), job("t-2", "r")],
      true,
    ],
    [
      "a tick run twice: a duplicate",
      [job("t-1", "s", true), job("t-1-a9", "s"), job("t-2", "s", true)],
      [job("t-1", "r", true), job("t-2", "r", true)],
      false,
    ],
    ["a tick lost", [job("t-1", "s", true)], [job("t-1", "r", true), job("t-2", "r", true)], false],
  ])(
    "within a clock horizon, counts the clock's children per family: %s",
    (_name, live, reference, matches) => {
      const comparison = compareEndStates(live, reference, DRIFT, { roles: noRoles, clockHorizonMs: 17_000 });
      expect(endStateMatches(comparison)).toBe(matches);
    },
  );

  describe("a tick made inside a reconcile that answered other news, in a life longer than the reference's", () => {
    // nightly-1796610660 here was created by the restarted process's first reconcile: no clock mark.
    const pending = { ...noRoles, clockPending: true as const };
    it.each<[string, Parameters<typeof compareEndStates>[3], boolean]>([
      ["the reference ended with a delayed requeue pending: left out, with a note", { roles: pending }, true],
      ["the reference had nothing pending: counted, a duplicate", { roles: noRoles }, false],
      [
        "within a clock horizon every life waits for the ticks: counted",
        { roles: pending, clockHorizonMs: 17_000 },
        false,
      ],
    ])("%s", (_name, context, matches) => {
      const comparison = compareEndStates([job("nightly-1796610660", "scenario")], [], DRIFT, context);
      expect(endStateMatches(comparison)).toBe(matches);
      if (matches)
        expect(comparison.clockMade).toEqual([
          expect.stringMatching(
            /^not compared: Job\/nightly-1796610660 \(here\) is of a family the reference has none of \(Job nightly-\*\), and the reference ended with the operator's delayed requeue still pending/,
          ),
        ]);
    });

    it("a second child of a family the reference has is neither a duplicate nor a pass: inconclusive", () => {
      const live = [job("nightly-1796610600", "scenario"), job("nightly-1796610660", "scenario")];
      const reference = [job("nightly-1796610600", "ref-a")];
      const pending = compareEndStates(live, reference, DRIFT, { roles: { ...noRoles, clockPending: true } });
      expect(pending.duplicates).toEqual([]);
      expect(pending.ticksUndecided).toEqual([
        "2 Job(s) of one family here where the reference has 1 (nightly-1796610600, nightly-1796610660)",
      ]);
      expect(unpairedVerdict(pending)?.status).toBe("inconclusive");
      expect(unpairedVerdict(pending)?.message).toMatch(
        /a clock horizon \(clock\.horizon\) lets every life wait/,
      );
      // With nothing pending at the reference's end, the same two are a duplicate.
      const settled = compareEndStates(live, reference, DRIFT, { roles: noRoles });
      expect(settled.duplicates).toMatchObject([{ kind: "Job", reference: 1, now: 2 }]);
      expect(settled.ticksUndecided).toEqual([]);
    });

    it("a tick of the reference's missing here is undecided, not missing", () => {
      const comparison = compareEndStates([], [job("nightly-1796610600", "ref-a")], DRIFT, {
        roles: { ...noRoles, clockPending: true },
      });
      expect(comparison.missing).toEqual([]);
      expect(comparison.ticksUndecided).toEqual(["missing Job/nightly-1796610600"]);
    });

    it("a child named for its role (no part a schedule varies) is counted all the same", () => {
      const comparison = compareEndStates([job("nightly-manual", "scenario")], [], DRIFT, {
        roles: { ...noRoles, clockPending: true },
      });
      expect(endStateMatches(comparison)).toBe(false);
    });
  });

  it("still counts a Job no tick made: an answer to the kit is judged as one", () => {
    const comparison = compareEndStates([job("nightly-manual", "scenario")], [], DRIFT, { roles: noRoles });
    expect(comparison.duplicates).toMatchObject([{ kind: "Job", reference: 0, now: 1 }]);
    expect(endStateMatches(comparison)).toBe(false);
  });
});
