import { describe, expect, it } from "vitest";
import { globMatches, promisesFor, resolvePromises, volatileOnly } from "../../../src/contract/promises.js";
import type { WriteEntry } from "../../../src/proxy/write-log.js";
import { warnOfUnknownKinds } from "../../../src/runner/run-kit.js";
import { ObjectKinds, sortByPromises } from "../../../src/suites/shared/promised.js";

const rules = resolvePromises([
  {
    kind: "WebApp",
    keeps: ["resourceVersion", "uid", "generation"],
    volatile: [
      { path: "status.lastHeartbeatTime", reason: "heartbeat" },
      { path: "status.conditions[*].lastHeartbeatTime", reason: "condition heartbeats" },
    ],
  },
  {
    kind: "ConfigMap",
    name: "session-*",
    keeps: ["resourceVersion", "generation"],
    reason: "rotated hourly",
    volatile: [],
  },
  { kind: "Deployment", keeps: ["uid"], reason: "an autoscaler writes it", volatile: [] },
]);

const contract = {
  promises: rules,
  customResource: { group: "demo.example", version: "v1", resource: "webapps", kind: "WebApp" },
};
const children = [
  {
    group: "",
    resource: "configmaps",
    ref: { apiVersion: "v1", kind: "ConfigMap", name: "x", namespace: "ns" },
  },
  {
    group: "apps",
    resource: "deployments",
    ref: { apiVersion: "apps/v1", kind: "Deployment", name: "x", namespace: "ns" },
  },
];

let seq = 0;
function write(fields: Partial<WriteEntry> & Pick<WriteEntry, "group" | "resource" | "effect">): WriteEntry {
  seq += 1;
  const entry: WriteEntry = {
    seq,
    time: "t",
    actor: "operator",
    verb: "update",
    version: "v1",
    code: 200,
    name: "x",
    ...fields,
  };
  return entry;
}

describe("promises", () => {
  it("match kinds and name patterns; an object no entry names promises everything", () => {
    expect(globMatches("session-*", "session-abc")).toBe(true);
    expect(globMatches("session-*", "my-session-abc")).toBe(false);
    expect(globMatches("a.b*", "axb")).toBe(false);
    expect([...promisesFor(rules, "ConfigMap", "session-1").withdrawn]).toEqual([
      ["uid", "promises[1]: rotated hourly"],
    ]);
    expect(promisesFor(rules, "ConfigMap", "registration-1").withdrawn.size).toBe(0);
    expect(promisesFor(rules, "Service", "x")).toEqual({ withdrawn: new Map(), volatile: [] });
  });

  it("call a write volatile only when every field it changed is; unknown fields are not guessed", () => {
    const webapp = promisesFor(rules, "WebApp", "hello");
    expect(volatileOnly(webapp, ["status.lastHeartbeatTime"])).toMatchObject({ only: true });
    expect(
      volatileOnly(webapp, ["status.conditions[type=Ready].lastHeartbeatTime", "status.lastHeartbeatTime"]),
    ).toMatchObject({
      only: true,
    });
    expect(volatileOnly(webapp, ["status.lastHeartbeatTime", "status.readyReplicas"])).toEqual({
      only: false,
    });
    expect(volatileOnly(webapp, [])).toEqual({ only: false });
    expect(volatileOnly(webapp, undefined)).toBe("unknown");
    expect(volatileOnly(promisesFor(rules, "Service", "x"), undefined)).toEqual({ only: false });
  });

  it("sort a window's writes: counted, allowed with why, or unknown", () => {
    const kinds = new ObjectKinds(contract, children);
    const heartbeat = write({
      group: "demo.example",
      resource: "webapps",
      name: "hello",
      subresource: "status",
      effect: "changed",
      changedPaths: ["status.lastHeartbeatTime"],
    });
    const realChange = write({
      group: "demo.example",
      resource: "webapps",
      name: "hello",
      effect: "changed",
      changedPaths: ["spec.replicas"],
    });
    const unreadable = write({
      group: "demo.example",
      resource: "webapps",
      name: "hello",
      effect: "changed",
    });
    const rotation = write({
      group: "",
      resource: "configmaps",
      name: "session-2",
      verb: "create",
      effect: "created",
    });
    const otherCreate = write({
      group: "",
      resource: "configmaps",
      name: "registration",
      verb: "create",
      effect: "created",
    });
    const scaled = write({
      group: "apps",
      resource: "deployments",
      name: "x",
      effect: "changed",
      changedPaths: ["spec.replicas"],
    });
    const unknownKind = write({ group: "batch", resource: "jobs", name: "j", effect: "changed" });
    const sorted = sortByPromises(
      [heartbeat, realChange, unreadable, rotation, otherCreate, scaled, unknownKind],
      kinds,
    );
    expect(sorted.counted).toEqual([realChange, otherCreate, unknownKind]);
    expect(sorted.unknown).toEqual([unreadable]);
    expect(sorted.excused.map((e) => e.why)).toEqual([
      `#${heartbeat.seq} update webapps/hello/status changed only volatile fields: status.lastHeartbeatTime (promises[0]: heartbeat)`,
      `#${rotation.seq} create configmaps/session-2: ConfigMap/session-2 does not promise uid (promises[1]: rotated hourly)`,
      `#${scaled.seq} update deployments/x: Deployment/x does not promise resourceVersion (promises[2]: an autoscaler writes it)`,
    ]);
  });
});

describe("warnOfUnknownKinds", () => {
  it("warns of a promise about a kind no reference state has, and of nothing when none was computed", async () => {
    const warnings: string[] = [];
    const logger = { warn: (line: string) => warnings.push(line) };
    const withTypo = {
      file: "c.yaml",
      customResource: contract.customResource,
      promises: resolvePromises([
        { kind: "Deploymnet", keeps: ["uid"], reason: "typo", volatile: [] },
        ...[],
      ]).concat(rules),
    };
    await warnOfUnknownKinds(
      withTypo,
      { childKinds: () => Promise.resolve(new Set(["Deployment", "ConfigMap", "Secret"])) },
      logger,
    );
    expect(warnings).toEqual([
      'c.yaml: promises[0].kind: "Deploymnet" is neither the custom resource\'s kind nor a kind of its children in the reference states (Deployment, ConfigMap, Secret, WebApp): it applied to nothing',
    ]);
    warnings.length = 0;
    await warnOfUnknownKinds(withTypo, { childKinds: () => Promise.resolve(new Set<string>()) }, logger);
    expect(warnings).toEqual([]);
  });
});
