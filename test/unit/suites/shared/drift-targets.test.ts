import { describe, expect, it } from "vitest";
import {
  driftPatch,
  driftTargets,
  formatPath,
  matchesTarget,
  operatorManagedPaths,
  parseTargetId,
  perturb,
  shownValue,
} from "../../../../src/suites/shared/drift-targets.js";
import { templateOf } from "../../../../src/scenario/child-roles.js";

const none = { include: [], exclude: [] };

const service = {
  metadata: { name: "web", labels: { a: "b" } },
  spec: {
    selector: { app: "web" },
    ports: [{ name: "http", port: 80, targetPort: 8080 }],
    clusterIP: "10.0.0.9",
  },
};

const deployment = {
  metadata: {
    name: "web",
    managedFields: [
      {
        manager: "webapp-operator",
        fieldsV1: {
          "f:spec": {
            "f:replicas": {},
            "f:template": {
              "f:spec": { "f:containers": { 'k:{"name":"web"}': { ".": {}, "f:image": {} } } },
            },
          },
        },
      },
      { manager: "kube-controller-manager", fieldsV1: { "f:status": { "f:replicas": {} } } },
    ],
  },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web", tier: "front" } },
      spec: {
        containers: [{ name: "web", image: "img:1", args: ["--a"], env: [{ name: "X", value: "1" }] }],
      },
    },
  },
};

describe("driftTargets", () => {
  it("a Service: selector values and every port's port and targetPort, never its cluster IP", () => {
    expect(
      driftTargets({ kind: "Service", object: service }, none).map((t) => [t.id, t.value, t.perturbed]),
    ).toEqual([
      ["Service/web spec.selector.app", "web", "web-drift"],
      ["Service/web spec.ports[0].port", 80, 81],
      ["Service/web spec.ports[0].targetPort", 8080, 8081],
    ]);
  });

  it("a Service port perturbed to a number no other port of its protocol uses: the server refuses duplicates", () => {
    const twoPorts = {
      ...service,
      spec: {
        ...service.spec,
        ports: [
          { name: "admin", port: 8081, protocol: "TCP", targetPort: 8081 },
          { name: "http", port: 8080, protocol: "TCP", targetPort: 8080 },
          { name: "dns", port: 8082, protocol: "UDP", targetPort: 53 },
        ],
      },
    };
    const perturbed = Object.fromEntries(
      driftTargets({ kind: "Service", object: twoPorts }, none).map((t) => [formatPath(t.path), t.perturbed]),
    );
    expect(perturbed["spec.ports[1].port"]).toBe(8082);
    expect(perturbed["spec.ports[0].port"]).toBe(8082);
    expect(perturbed["spec.ports[2].port"]).toBe(8083);
  });

  it("a Deployment: replicas the operator manages, template labels outside the selector, each container's image, args and env; never the selector", () => {
    expect(
      driftTargets({ kind: "Deployment", object: deployment }, none).map((t) => formatPath(t.path)),
    ).toEqual([
      "spec.replicas",
      "spec.template.metadata.labels.tier",
      "spec.template.spec.containers[0].image",
      "spec.template.spec.containers[0].args",
      "spec.template.spec.containers[0].env",
    ]);
    const unmanaged = { ...deployment, metadata: { name: "web" } };
    expect(
      driftTargets({ kind: "Deployment", object: unmanaged }, none).map((t) => formatPath(t.path)),
    ).not.toContain("spec.replicas");
  });

  it("another kind: the spec and data fields the operator's managedFields show", () => {
    const configMap = {
      metadata: {
        name: "reg-0f0e0d0c-0b0a-0908-0706-050403020100",
        managedFields: [
          {
            manager: "my-operator",
            fieldsV1: {
              "f:data": { ".": {}, "f:owner": {}, "f:port": {} },
              "f:metadata": { "f:labels": { "f:x": {} } },
            },
          },
          { manager: "reconcile-conformance", fieldsV1: { "f:data": { "f:kit": {} } } },
        ],
      },
      data: { owner: "me", port: "8080", kit: "k" },
    };
    expect(driftTargets({ kind: "ConfigMap", object: configMap }, none).map((t) => t.id)).toEqual([
      "ConfigMap/reg-<uid> data.owner",
      "ConfigMap/reg-<uid> data.port",
    ]);
  });

  it("include and exclude by Kind/path or Kind/name path", () => {
    const excluded = driftTargets(
      { kind: "Service", object: service },
      { include: [], exclude: ["Service/spec.ports"] },
    );
    expect(excluded.map((t) => t.id)).toEqual(["Service/web spec.selector.app"]);
    const included = driftTargets(
      { kind: "Service", object: service },
      { include: ["Service/web spec.ports[0].name"], exclude: [] },
    );
    expect(included.map((t) => t.id)).toContain("Service/web spec.ports[0].name");
    expect(
      driftTargets(
        { kind: "Service", object: service },
        { include: ["Service/other spec.ports[0].name"], exclude: [] },
      ).map((t) => t.id),
    ).not.toContain("Service/web spec.ports[0].name");
  });

  it("a child whose name varies with the life answers to its role's name and to any life's literal name", () => {
    const named = (name: string) => ({ ...service, metadata: { ...service.metadata, name } });
    const template = templateOf("web-1a2b3c4d", "web-9f8e7d6c");
    if (!template) throw new Error("no template");
    const child = { kind: "Service", object: named("web-1a2b3c4d"), name: "web-*", template };
    const ids = (selection: { include: string[]; exclude: string[] }) =>
      driftTargets(child, selection).map((t) => t.id);
    for (const name of ["web-*", "web-1a2b3c4d", "web-00ff00ff"]) {
      expect(ids({ include: [`Service/${name} spec.ports[0].name`], exclude: [] })).toContain(
        "Service/web-* spec.ports[0].name",
      );
      expect(ids({ include: [], exclude: [`Service/${name} spec.ports`] })).toEqual([
        "Service/web-* spec.selector.app",
      ]);
    }
    // A name that does not fit the template is another child's.
    expect(ids({ include: [], exclude: ["Service/db-1a2b3c4d spec.ports"] })).toHaveLength(3);
  });
});

describe("target ids", () => {
  it.each([
    ["Deployment/spec.replicas", { kind: "Deployment", path: ["spec", "replicas"] }],
    ["Service/web spec.ports[0].port", { kind: "Service", name: "web", path: ["spec", "ports", 0, "port"] }],
    ["nonsense", undefined],
  ])("%s", (text, expected) => {
    expect(parseTargetId(text)).toEqual(expected);
  });

  it("matches a prefix of a path", () => {
    const [target] = driftTargets({ kind: "Service", object: service }, { include: [], exclude: [] }).slice(
      1,
    );
    expect(target && matchesTarget("Service/spec.ports", target)).toBe(true);
    expect(target && matchesTarget("Service/spec.port", target)).toBe(false);
    expect(target && matchesTarget("Deployment/spec.ports", target)).toBe(false);
  });
});

describe("perturb", () => {
  it.each<[unknown, unknown]>([
    [80, 81],
    ["img:1", "img:1-drift"],
    [true, false],
    [["--a"], ["--a", "--drift"]],
    [
      [{ name: "X", value: "1" }],
      [
        { name: "X", value: "1" },
        { name: "RECONCILE_CONFORMANCE_DRIFT", value: "drift" },
      ],
    ],
    [{ a: 1 }, undefined],
    [null, undefined],
  ])("%j -> %j", (value, expected) => {
    expect(perturb(value)).toEqual(expected);
  });
});

describe("operatorManagedPaths and driftPatch", () => {
  it("resolves keyed list elements to positions, and leaves out the built-in controllers", () => {
    expect(operatorManagedPaths(deployment).map(formatPath)).toEqual([
      "spec.replicas",
      "spec.template.spec.containers[0].image",
    ]);
  });

  it("replaces the target and adds the foreign metadata, creating the maps when absent (JSON pointers escaped)", () => {
    const [selector] = driftTargets({ kind: "Service", object: service }, none);
    if (!selector) throw new Error("no target");
    const foreign = { annotation: ["example.com/a", "1"], label: ["example.com/l", "1"] } as const;
    expect(driftPatch(selector, service, foreign)).toEqual([
      { op: "replace", path: "/spec/selector/app", value: "web-drift" },
      { op: "add", path: "/metadata/annotations", value: { "example.com/a": "1" } },
      { op: "add", path: "/metadata/labels/example.com~1l", value: "1" },
    ]);
  });
});

describe("shownValue", () => {
  it.each<[string, string, (string | number)[], unknown, unknown]>([
    ["a Secret's data: a keyed hash", "Secret", ["data", "password"], "aHVudGVyMg==", /^hmac:[0-9a-f]{12}$/],
    [
      "a Secret's stringData: a keyed hash",
      "Secret",
      ["stringData", "token"],
      "hunter2",
      /^hmac:[0-9a-f]{12}$/,
    ],
    ["a Secret's metadata: as it is", "Secret", ["metadata", "labels", "app"], "web", "web"],
    ["a ConfigMap's data: as it is", "ConfigMap", ["data", "port"], "8080", "8080"],
    ["an absent value: absent", "Secret", ["data", "password"], undefined, undefined],
  ])("%s", (_name, kind, path, value, expected) => {
    const shown = shownValue(kind, path, value);
    if (expected instanceof RegExp) expect(shown).toMatch(expected);
    else expect(shown).toBe(expected);
  });

  it("shows the same value as the same hash and another as another", () => {
    const a = shownValue("Secret", ["data", "p"], "one");
    expect(shownValue("Secret", ["data", "p"], "one")).toBe(a);
    expect(shownValue("Secret", ["data", "p"], "two")).not.toBe(a);
  });
});
