import { describe, expect, it } from "vitest";
import {
  canonicalOrder,
  comparisonKey,
  identityKey,
  relocated,
  sameValue,
} from "../../../src/util/keyed-lists.js";

const port = (name: string | undefined, number: number, protocol = "TCP") => ({
  ...(name ? { name } : {}),
  port: number,
  protocol,
});

describe("identityKey", () => {
  it.each([
    ["conditions by type", [[{ type: "Ready" }, { type: "Degraded" }]], "type"],
    ["containers by name", [[{ name: "web" }, { name: "sidecar" }]], "name"],
    ["two lists keyed alike", [[{ name: "a" }], [{ name: "b" }, { name: "a" }]], "name"],
    ["no key when names repeat", [[{ name: "a" }, { name: "a" }]], undefined],
    ["no key for unnamed ports: a port number is no identity over time", [[port(undefined, 80)]], undefined],
    ["no key for scalars", [["a", "b"]], undefined],
    ["no key for empty lists", [[], []], undefined],
  ])("%s", (_name, lists, key) => {
    expect(identityKey(...(lists as unknown[][]))).toBe(key);
  });
});

describe("comparisonKey", () => {
  it.each([
    ["named ports by name", "ports", [[port("http", 80), port("metrics", 9090)]], "name"],
    [
      "unnamed container ports by containerPort",
      "ports",
      [[{ containerPort: 80 }, { containerPort: 81 }]],
      "containerPort",
    ],
    ["unnamed service ports by port", "ports", [[port(undefined, 80), port(undefined, 81, "UDP")]], "port"],
    [
      "volume mounts by mountPath when names repeat",
      "volumeMounts",
      [
        [
          { name: "v", mountPath: "/a" },
          { name: "v", mountPath: "/b" },
        ],
      ],
      "mountPath",
    ],
    [
      "init containers keep their order: they run in it",
      "initContainers",
      [[{ name: "b" }, { name: "a" }]],
      undefined,
    ],
    ["args keep their order", "args", [["--a", "--b"]], undefined],
    ["objects with no known key keep their order", "steps", [[{ run: "a" }, { run: "b" }]], undefined],
  ])("%s", (_name, field, lists, key) => {
    expect(comparisonKey(field, ...(lists as unknown[][]))).toBe(key);
  });
});

describe("canonicalOrder and sameValue", () => {
  const service = (ports: unknown[]) => ({ spec: { ports, selector: { app: "x" } } });

  it("reads a Service whose ports were written in another order as the same", () => {
    const a = service([port("http", 80), port("amqp", 5672), port("metrics", 9090)]);
    const b = service([port("metrics", 9090), port("http", 80), port("amqp", 5672)]);
    expect(sameValue(a, b)).toBe(true);
    expect(canonicalOrder(a)).toEqual(canonicalOrder(b));
  });

  it("still tells a port that changed", () => {
    const a = service([port("http", 80), port("amqp", 5672)]);
    const b = service([port("amqp", 5673), port("http", 80)]);
    expect(sameValue(a, b)).toBe(false);
  });

  it("keeps the order of lists whose order means something", () => {
    expect(sameValue({ args: ["--a", "--b"] }, { args: ["--b", "--a"] })).toBe(false);
    const pod = (names: string[]) => ({ initContainers: names.map((name) => ({ name })) });
    expect(sameValue(pod(["migrate", "seed"]), pod(["seed", "migrate"]))).toBe(false);
  });

  it("orders nested keyed lists too: env inside containers", () => {
    const container = (env: string[]) => ({ name: "web", env: env.map((name) => ({ name, value: name })) });
    expect(
      sameValue(
        { containers: [container(["A", "B"]), { name: "side" }] },
        { containers: [{ name: "side" }, container(["B", "A"])] },
      ),
    ).toBe(true);
  });

  it("changes nothing it is given", () => {
    const a = service([port("b", 2), port("a", 1)]);
    const copy = structuredClone(a);
    canonicalOrder(a);
    expect(a).toEqual(copy);
  });
});

describe("relocated", () => {
  const from = { spec: { ports: [port("http", 80), port("metrics", 9090)] } };
  const to = { spec: { ports: [port("metrics", 9091), port("http", 80)] } };

  it.each([
    [
      "finds a named port where it is in the other object",
      ["spec", "ports", 1, "port"],
      ["spec", "ports", 0, "port"],
    ],
    ["keeps a path through no list", ["spec", "ports"], ["spec", "ports"]],
  ])("%s", (_name, path, expected) => {
    expect(relocated(path, from, to)).toEqual(expected);
  });

  it("is undefined when the other object has no such element", () => {
    expect(relocated(["spec", "ports", 0], from, { spec: { ports: [port("amqp", 5672)] } })).toBeUndefined();
  });

  it("keeps the position in a list with no key", () => {
    expect(relocated(["args", 1], { args: ["a", "b"] }, { args: ["c", "d"] })).toEqual(["args", 1]);
  });
});
