import { describe, expect, it } from "vitest";
import {
  chooseCandidates,
  specCandidates,
  valueShowsIn,
  valueToSet,
  type SpecCandidate,
} from "../../../src/contract/spec-candidates.js";

// A spec of every form the schema can type, nested ones included.
const schema = {
  type: "object",
  required: ["image", "port"],
  properties: {
    image: { type: "string" },
    port: { type: "integer", minimum: 1, maximum: 65535 },
    replicas: { type: "integer", minimum: 0, maximum: 3 },
    debug: { type: "boolean" },
    mode: { type: "string", enum: ["fast", "safe"] },
    schedule: { type: "string" },
    name: { type: "string", pattern: "^[a-z]+$" },
    url: { type: "string" },
    size: { "x-kubernetes-int-or-string": true },
    pages: { type: "object", additionalProperties: { type: "string" }, maxProperties: 5 },
    tags: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set", minItems: 1 },
    ports: {
      type: "array",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
      items: {
        type: "object",
        required: ["name", "port"],
        properties: { name: { type: "string" }, port: { type: "integer", minimum: 1 } },
      },
    },
    tls: {
      type: "object",
      properties: { enabled: { type: "boolean" }, secretName: { type: "string", maxLength: 10 } },
    },
    extra: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
  },
};

const spec = {
  image: "registry.k8s.io/pause:3.10.1",
  port: 8080,
  replicas: 3,
  mode: "fast",
  schedule: "*/5 * * * *",
  name: "web",
  url: "https://example.com/hook",
  size: "1Gi",
  pages: { "index.md": "hello", "about.md": "me" },
  tags: ["a"],
  ports: [{ name: "http", port: 80 }],
  tls: { enabled: true, secretName: "tls-secret" },
  extra: { anything: 1 },
};

describe("specCandidates", () => {
  const { candidates, leftAlone } = specCandidates(spec, schema);
  const described = candidates.map((c) => c.description);

  it("changes every field it can, each in the schema's bounds and forms", () => {
    expect(described).toEqual([
      "spec.port: 8080 → 8081",
      "spec.replicas: removed (was 3)",
      "spec.replicas: 3 → 2",
      "spec.debug: set to true",
      'spec.mode: removed (was "fast")',
      'spec.mode: "fast" → "safe"',
      'spec.schedule: removed (was "*/5 * * * *")',
      'spec.schedule: "*/5 * * * *" → "*/6 * * * *"',
      'spec.name: removed (was "web")',
      'spec.url: removed (was "https://example.com/hook")',
      'spec.size: removed (was "1Gi")',
      'spec.pages: removed (was {"index.md":"hello","about.md":"me"})',
      'spec.pages: key about.md-added added ("me")',
      "spec.pages: key about.md removed",
      'spec.tags: removed (was ["a"])',
      "spec.tags: element added (a copy of element 0, varied)",
      'spec.ports: removed (was [{"name":"http","port":80}])',
      "spec.ports: element added (a copy of element 0, varied)",
      'spec.ports: element 0 removed ({"name":"http","port":80})',
      'spec.ports[0].name: "http" → "http-updated"',
      "spec.ports[0].port: 80 → 81",
      'spec.tls: removed (was {"enabled":true,"secretName":"tls-secret"})',
      "spec.tls.enabled: removed (was true)",
      "spec.tls.enabled: true → false",
      'spec.tls.secretName: removed (was "tls-secret")',
      'spec.extra: removed (was {"anything":1})',
    ]);
  });

  it("writes each change as a merge patch, whole lists where it changes under one", () => {
    const patch = (description: string) => candidates.find((c) => c.description === description)?.patch;
    expect(patch("spec.pages: key about.md removed")).toEqual({ spec: { pages: { "about.md": null } } });
    expect(patch("spec.tls.enabled: true → false")).toEqual({ spec: { tls: { enabled: false } } });
    expect(patch("spec.ports[0].port: 80 → 81")).toEqual({ spec: { ports: [{ name: "http", port: 81 }] } });
    // A list-map's key stays unique, a set's element too.
    expect(patch("spec.ports: element added (a copy of element 0, varied)")).toEqual({
      spec: {
        ports: [
          { name: "http", port: 80 },
          { name: "http-updated", port: 80 },
        ],
      },
    });
    expect(patch("spec.tags: element added (a copy of element 0, varied)")).toEqual({
      spec: { tags: ["a", "a-updated"] },
    });
    expect(patch("spec.replicas: removed (was 3)")).toEqual({ spec: { replicas: null } });
  });

  it("leaves alone what it cannot vary with certainty, and says why", () => {
    expect(leftAlone).toEqual([
      {
        field: "spec.image",
        why: "an image reference: another tag may not exist where the cluster pulls it",
      },
      { field: "spec.name", why: "a pattern the kit cannot satisfy with certainty" },
      { field: "spec.url", why: "a URL the operator would connect to" },
      {
        field: "spec.size",
        why: "an int-or-string (a quantity, a port name or number) the kit does not vary",
      },
      { field: "spec.tls.secretName", why: "no room for a suffix within its maxLength" },
      { field: "spec.extra", why: "an object of any form (x-kubernetes-preserve-unknown-fields)" },
    ]);
    // Required fields are never removed; a list at its minItems loses no element.
    expect(
      described.some((d) => d.startsWith("spec.image: removed") || d.startsWith("spec.port: removed")),
    ).toBe(false);
    expect(described).not.toContain('spec.tags: element 0 removed ("a")');
  });
});

describe("valueToSet", () => {
  it("sets an absent field to a value of its form other than its default", () => {
    expect(valueToSet({ type: "boolean", default: true })).toBe(false);
    expect(valueToSet({ type: "integer", minimum: 5, default: 5 })).toBe(6);
    expect(valueToSet({ type: "string", minLength: 12 })).toBe("generatedxxx");
    expect(valueToSet({ type: "string", format: "date-time" })).toBeUndefined();
    expect(valueToSet({ type: "object", additionalProperties: { type: "string" } })).toEqual({
      generated: "generated",
    });
    expect(
      valueToSet({
        type: "object",
        required: ["size"],
        properties: { size: { type: "integer", minimum: 1 }, note: { type: "string" } },
      }),
    ).toEqual({ size: 1 });
    expect(
      valueToSet({
        type: "object",
        required: ["when"],
        properties: { when: { type: "string", format: "date" } },
      }),
    ).toBeUndefined();
  });
});

describe("chooseCandidates", () => {
  const candidate = (field: string, change: SpecCandidate["change"] = "value"): SpecCandidate => ({
    path: ["spec", field],
    change,
    patch: {},
    description: `spec.${field} ${change}`,
  });
  const all = [
    candidate("a"),
    candidate("a", "remove"),
    candidate("b"),
    candidate("c"),
    candidate("d"),
    candidate("d", "remove"),
  ];

  it("takes fields that show in a child first, one change per field first, and as many as the budget", () => {
    const chosen = chooseCandidates(all, {
      budget: 4,
      seed: 1,
      shows: (c) => c.path[1] === "d" || c.path[1] === "b",
    });
    expect(chosen).toHaveLength(4);
    expect(new Set(chosen.slice(0, 2).map((c) => c.path[1]))).toEqual(new Set(["b", "d"]));
    expect(new Set(chosen.map((c) => c.path[1]))).toEqual(new Set(["a", "b", "c", "d"]));
  });

  it("tries a field's change or removal within it before removing the field, and both before an addition", () => {
    const env = [
      { ...candidate("env", "key-added"), path: ["spec", "env", "B"] },
      candidate("env", "remove"),
      { ...candidate("env", "key-removed"), path: ["spec", "env", "A"] },
    ];
    for (const seed of [1, 2, 3, 4]) {
      expect(chooseCandidates(env, { budget: 3, seed, shows: () => true }).map((c) => c.change)).toEqual([
        "key-removed",
        "remove",
        "key-added",
      ]);
    }
  });

  it("makes the same choice for the same seed, and may make another for another", () => {
    const order = (seed: number) =>
      chooseCandidates(all, { budget: 6, seed, shows: () => false }).map((c) => c.description);
    expect(order(7)).toEqual(order(7));
    const orders = new Set([1, 2, 3, 4, 5, 6, 7, 8].map((seed) => order(seed).join("|")));
    expect(orders.size).toBeGreaterThan(1);
    expect(chooseCandidates(all, { budget: 0, seed: 1, shows: () => true })).toEqual([]);
  });
});

describe("valueShowsIn", () => {
  const sample = { spec: { port: 8080, pages: { "index.md": "hello" }, debug: false, note: "unused-note" } };
  const children = [
    { metadata: { name: "web", uid: "x" }, spec: { ports: [{ containerPort: 8080 }] } },
    { metadata: { name: "web-pages" }, data: { "index.md": "hello" } },
  ];

  it("says whether the sample's value of the field is among a child's values", () => {
    expect(valueShowsIn(sample, ["spec", "port"], children)).toBe(true);
    expect(valueShowsIn(sample, ["spec", "pages"], children)).toBe(true);
    expect(valueShowsIn(sample, ["spec", "note"], children)).toBe(false);
    expect(valueShowsIn(sample, ["spec", "absent"], children)).toBe(false);
  });
});
