import { describe, expect, it } from "vitest";
import {
  changedPaths,
  formatObjectPath,
  parsePath,
  pathWithin,
  PathSyntaxError,
} from "../../../src/util/object-paths.js";

const changed = (before: unknown, after: unknown, ignore: string[] = []) =>
  changedPaths(before, after, ignore.map(parsePath)).map(formatObjectPath);

describe("object paths", () => {
  it("read back as they are written", () => {
    for (const text of [
      "status.lastHeartbeatTime",
      'metadata.annotations["example.com/config-hash"]',
      "status.conditions[type=Ready].lastTransitionTime",
      'spec.ports[name="http port"].port',
      "spec.template.spec.containers[0].args[1]",
      "status.conditions[*].lastHeartbeatTime",
    ]) {
      expect(formatObjectPath(parsePath(text))).toBe(text);
    }
    expect(parsePath('metadata.labels["app.kubernetes.io/name"]')).toEqual([
      { field: "metadata" },
      { field: "labels" },
      { field: "app.kubernetes.io/name" },
    ]);
  });

  it("refuse what they cannot read, saying where", () => {
    for (const [text, message] of [
      ["", "empty path"],
      [".status", "a path starts with a field name at character 1"],
      ["status..time", "expected a field name"],
      ["status[", 'expected [<index>], [<field>=<value>], [*] or ["<key>"] at character 8'],
      ['metadata.annotations["open', "unterminated string"],
      ["status.conditions[type=]", 'expected a value after "type="'],
      ["status x", 'expected "." or "["'],
    ] as const) {
      expect(() => parsePath(text), text).toThrow(PathSyntaxError);
      expect(() => parsePath(text), text).toThrow(message);
    }
  });

  it("match a change at or under a pattern, [*] standing for any element", () => {
    const within = (path: string, pattern: string) => pathWithin(parsePath(path), parsePath(pattern));
    expect(within("status.lastHeartbeatTime", "status.lastHeartbeatTime")).toBe(true);
    expect(within('metadata.annotations["a/b"]', "metadata.annotations")).toBe(true);
    expect(
      within("status.conditions[type=Ready].lastHeartbeatTime", "status.conditions[*].lastHeartbeatTime"),
    ).toBe(true);
    expect(within("status.conditions[2].lastHeartbeatTime", "status.conditions[*].lastHeartbeatTime")).toBe(
      true,
    );
    expect(within("status.conditions[type=Ready].status", "status.conditions[*].lastHeartbeatTime")).toBe(
      false,
    );
    expect(within("status", "status.lastHeartbeatTime")).toBe(false);
    expect(within("status.lastHeartbeatTimeX", "status.lastHeartbeatTime")).toBe(false);
  });
});

describe("changedPaths", () => {
  it("names the leaves that changed, appeared or went away, and nothing else", () => {
    expect(
      changed(
        { spec: { replicas: 1, image: "a" }, status: { seen: "t1" } },
        { spec: { replicas: 1, image: "b" }, status: { seen: "t2", extra: true } },
      ),
    ).toEqual(["spec.image", "status.seen", "status.extra"]);
    expect(changed({ spec: { a: 1 } }, { spec: { a: 1 } })).toEqual([]);
  });

  it("reads an annotation added to an object that had none as that annotation", () => {
    expect(
      changed(
        { metadata: { name: "x" } },
        { metadata: { name: "x", annotations: { "example.com/hash": "1" } } },
      ),
    ).toEqual(['metadata.annotations["example.com/hash"]']);
  });

  it("keys conditions by type and ports by name: each compared with its namesake, a new order a change of the list", () => {
    const before = {
      status: {
        conditions: [
          { type: "Ready", status: "True", lastHeartbeatTime: "t1" },
          { type: "Synced", status: "True", lastHeartbeatTime: "t1" },
        ],
      },
      spec: { ports: [{ name: "http", port: 80 }] },
    };
    const after = {
      status: {
        conditions: [
          { type: "Synced", status: "True", lastHeartbeatTime: "t1" },
          { type: "Ready", status: "True", lastHeartbeatTime: "t2" },
        ],
      },
      spec: { ports: [{ name: "http", port: 8080 }] },
    };
    expect(changed(before, after)).toEqual([
      "status.conditions",
      "status.conditions[type=Ready].lastHeartbeatTime",
      "spec.ports[name=http].port",
    ]);
    const inOrder = { ...after, status: { conditions: [...after.status.conditions].reverse() } };
    expect(changed(before, inOrder)).toEqual([
      "status.conditions[type=Ready].lastHeartbeatTime",
      "spec.ports[name=http].port",
    ]);
  });

  it("compares other lists by position, and a list of another length as a whole", () => {
    expect(changed({ args: ["a", "b"] }, { args: ["a", "c"] })).toEqual(["args[1]"]);
    expect(changed({ args: ["a"] }, { args: ["a", "b"] })).toEqual(["args"]);
    expect(
      changed({ items: [{ type: "A" }, { type: "A" }] }, { items: [{ type: "A" }, { type: "B" }] }),
    ).toEqual(["items[1].type"]);
  });

  it("leaves out what the caller ignores (what the server maintains)", () => {
    expect(
      changed(
        { metadata: { resourceVersion: "1", managedFields: [{ time: "a" }], generation: 1 }, spec: { a: 1 } },
        { metadata: { resourceVersion: "2", managedFields: [{ time: "b" }], generation: 2 }, spec: { a: 2 } },
        ["metadata.resourceVersion", "metadata.managedFields", "metadata.generation"],
      ),
    ).toEqual(["spec.a"]);
  });
});

describe("changedPaths, edges", () => {
  it("names an empty map that appeared, the leaves of a map that replaced null, and a keyed list that changed order", () => {
    expect(changed({ spec: {} }, { spec: { selector: {} } })).toEqual(["spec.selector"]);
    expect(
      changed({ metadata: { annotations: null } }, { metadata: { annotations: { "a/b": "1" } } }),
    ).toEqual(['metadata.annotations["a/b"]']);
    expect(changed({ metadata: { annotations: null } }, { metadata: { annotations: {} } })).toEqual([
      "metadata.annotations",
    ]);
    const filters = (...types: string[]) => ({ spec: { filters: types.map((type) => ({ type })) } });
    expect(changed(filters("A", "B"), filters("B", "A"))).toEqual(["spec.filters"]);
    expect(changed(filters("A", "B"), filters("A", "B", "C"))).toEqual(["spec.filters[type=C].type"]);
  });

  it("refuses a quoted key that is not valid JSON, as a path error", () => {
    expect(() => parsePath('metadata.annotations["a\\q"]')).toThrow(PathSyntaxError);
    expect(() => parsePath('spec.ports[name="\\u12"]')).toThrow("not a valid quoted string");
  });
});
