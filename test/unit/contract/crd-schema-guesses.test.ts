import { describe, expect, it } from "vitest";
import {
  chooseReadiness,
  fieldsLeftAlone,
  proposeStarterUpdates,
  proposeUpdates,
  schedulePeriodMs,
  stringVariation,
  type ProposedUpdate,
} from "../../../src/contract/crd-schema-guesses.js";

const withSpec = (properties: Record<string, unknown>) => ({
  type: "object",
  properties: { spec: { type: "object", properties } },
});

describe("proposeUpdates, the first", () => {
  it.each<[string, unknown, Record<string, unknown>, ProposedUpdate | undefined]>([
    [
      "an integer goes up",
      { replicas: 1 },
      withSpec({ replicas: { type: "integer", minimum: 0 } }),
      { field: "replicas", from: 1, to: 2 },
    ],
    [
      "down at its maximum",
      { size: 3 },
      withSpec({ size: { type: "integer", maximum: 3 } }),
      { field: "size", from: 3, to: 2 },
    ],
    [
      "exclusive bounds",
      { n: 2 },
      withSpec({ n: { type: "integer", exclusiveMaximum: true, maximum: 3, minimum: 1 } }),
      { field: "n", from: 2, to: 1 },
    ],
    [
      "an integer with no room is left",
      { n: 1 },
      withSpec({ n: { type: "integer", minimum: 1, maximum: 1 } }),
      undefined,
    ],
    [
      "integers before strings",
      { mode: "a", n: 1 },
      withSpec({ mode: { type: "string" }, n: { type: "integer" } }),
      { field: "n", from: 1, to: 2 },
    ],
    [
      "multipleOf and enum integers are left",
      { a: 2, b: 1 },
      withSpec({ a: { type: "integer", multipleOf: 2 }, b: { type: "integer", enum: [1, 2] } }),
      undefined,
    ],
    [
      "another enum value",
      { mode: "fast" },
      withSpec({ mode: { type: "string", enum: ["fast", "slow"] } }),
      { field: "mode", from: "fast", to: "slow" },
    ],
    [
      "an enum of one value is left",
      { mode: "fast" },
      withSpec({ mode: { type: "string", enum: ["fast"] } }),
      undefined,
    ],
    [
      "a plain string gets -updated",
      { greeting: "hi" },
      withSpec({ greeting: { type: "string" } }),
      { field: "greeting", from: "hi", to: "hi-updated" },
    ],
    [
      "pattern, format, maxLength",
      { a: "x", b: "y", c: "z" },
      withSpec({
        a: { type: "string", pattern: "^x$" },
        b: { type: "string", format: "uri" },
        c: { type: "string", maxLength: 3 },
      }),
      undefined,
    ],
    [
      "CEL validations are left",
      { n: 1 },
      withSpec({ n: { type: "integer", "x-kubernetes-validations": [{ rule: "self < 2" }] } }),
      undefined,
    ],
    ["a field the schema does not type", { n: 1 }, withSpec({}), undefined],
    ["a value of another type", { n: "1" }, withSpec({ n: { type: "integer" } }), undefined],
    ["no spec", undefined, withSpec({ n: { type: "integer" } }), undefined],
  ])("%s", (_name, spec, schema, expected) => {
    expect(proposeUpdates(spec, schema)[0]).toEqual(expected);
  });
});

describe("chooseReadiness", () => {
  it.each<[string, Record<string, unknown>, "conditions" | "quiet"]>([
    [
      "status.conditions",
      { properties: { status: { properties: { conditions: { type: "array" } } } } },
      "conditions",
    ],
    [
      "a status without conditions",
      { properties: { status: { properties: { count: { type: "integer" } } } } },
      "quiet",
    ],
    ["no status", { properties: { spec: {} } }, "quiet"],
    [
      "a status of no known shape",
      { properties: { status: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } },
      "conditions",
    ],
    ["no schema", {}, "conditions"],
  ])("%s", (_name, schema, expected) => {
    expect(chooseReadiness(schema)).toBe(expected);
  });
});

describe("proposeStarterUpdates", () => {
  const schema = withSpec({
    replicas: { type: "integer", minimum: 0 },
    image: { type: "string" },
    port: { type: "integer" },
    mode: { type: "string", enum: ["a", "b"] },
  });
  it.each<[string, unknown, string[]]>([
    [
      "two fields, integers first, each once",
      { image: "web:1", replicas: 1, port: 80, mode: "a" },
      ["replicas", "port"],
    ],
    ["an integer, then a string", { image: "web:1", replicas: 1 }, ["replicas", "image"]],
    ["none when it offers none", { other: true }, []],
  ])("%s", (_name, spec, fields) => {
    const updates = proposeStarterUpdates(spec, schema);
    expect(updates.map((u) => u.field)).toEqual(fields);
    expect(new Set(updates.map((u) => u.field)).size).toBe(updates.length);
  });

  it.each<[string, unknown, [unknown, unknown][]]>([
    [
      "a string twice, each change from the last",
      { image: "web:1" },
      [
        ["web:1", "web:1-updated"],
        ["web:1-updated", "web:1-updated-updated"],
      ],
    ],
    [
      "an integer twice",
      { replicas: 1 },
      [
        [1, 2],
        [2, 3],
      ],
    ],
    [
      "an enum onto its third value, never back",
      { mode: "a" },
      [
        ["a", "b"],
        ["b", "c"],
      ],
    ],
    ["one when there is no third", { port: 65535 }, [[65535, 65534]]],
  ])("one field the schema offers: %s", (_name, spec, steps) => {
    const withThree = withSpec({
      replicas: { type: "integer", minimum: 0 },
      image: { type: "string" },
      port: { type: "integer", maximum: 65535, minimum: 65534 },
      mode: { type: "string", enum: ["a", "b", "c"] },
    });
    expect(proposeStarterUpdates(spec, withThree).map((u) => [u.from, u.to])).toEqual(steps);
  });
});

describe("stringVariation: another value in the string's own form, or why none", () => {
  it.each<[string, string, string, Record<string, unknown>, { to: string; form?: string } | { why: RegExp }]>(
    [
      // A CronJob-style operator's schedule: a suffix its parser may read as the same schedule.
      [
        "every minute becomes every two",
        "schedule",
        "*/1 * * * *",
        {},
        { to: "*/2 * * * *", form: "cron schedule" },
      ],
      [
        "a fixed minute moves half an hour",
        "schedule",
        "5 3 * * *",
        {},
        { to: "35 3 * * *", form: "cron schedule" },
      ],
      ["every minute as a star", "cron", "* * * * *", {}, { to: "*/2 * * * *", form: "cron schedule" }],
      ["a shorthand", "schedule", "@hourly", {}, { to: "@daily", form: "cron schedule" }],
      ["a duration doubles", "interval", "30s", {}, { to: "60s", form: "duration" }],
      ["a compound duration", "period", "1m30s", {}, { to: "2m30s", form: "duration" }],
      ["a quantity doubles", "storage", "512Mi", {}, { to: "1024Mi", form: "quantity" }],
      ["a plain string gets a suffix", "greeting", "hello", {}, { to: "hello-updated" }],
      ["an image gets another tag", "image", "web:1", {}, { to: "web:1-updated" }],
      ["a URL is left alone", "endpoint", "https://example.com/hook", {}, { why: /URL/ }],
      ["a pattern is left alone", "name", "abc", { pattern: "^[a-z]+$" }, { why: /pattern/ }],
      ["a format is left alone", "since", "2026-01-01", { format: "date" }, { why: /format date/ }],
      [
        "a time field in a form the kit does not know",
        "schedule",
        "every monday",
        {},
        { why: /parses it as time/ },
      ],
      ["a name with no room for a suffix", "name", "a".repeat(60), {}, { why: /no room/ }],
      ["beyond maxLength", "tag", "abcd", { maxLength: 6 }, { why: /maxLength/ }],
    ],
  )("%s", (_name, field, value, property, expected) => {
    const variation = stringVariation(field, value, { type: "string", ...property });
    if ("why" in expected) expect("why" in variation && variation.why).toMatch(expected.why);
    else expect(variation).toEqual(expected);
  });

  it("leaves the schedule out of the proposed updates only when it cannot vary it, and says why", () => {
    const schema = withSpec({ schedule: { type: "string" }, endpoint: { type: "string" } });
    const spec = { schedule: "*/1 * * * *", endpoint: "https://example.com" };
    expect(proposeUpdates(spec, schema)).toEqual([
      { field: "schedule", from: "*/1 * * * *", to: "*/2 * * * *", form: "cron schedule" },
    ]);
    expect(fieldsLeftAlone(spec, schema)).toEqual([
      { field: "endpoint", why: "a URL the operator would connect to" },
    ]);
  });
});

describe("schedulePeriodMs", () => {
  it.each<[string, unknown, { field: string; ms: number } | undefined]>([
    ["a cron schedule every minute", { schedule: "*/1 * * * *" }, { field: "schedule", ms: 60_000 }],
    ["every five minutes", { cron: "*/5 * * * *" }, { field: "cron", ms: 300_000 }],
    ["a fixed minute: hourly", { schedule: "0 * * * *" }, { field: "schedule", ms: 3_600_000 }],
    ["an interval as a duration", { syncInterval: "45s" }, { field: "syncInterval", ms: 45_000 }],
    ["a timeout is no schedule", { timeout: "30s" }, undefined],
    ["a duration under another name is no schedule", { grace: "30s" }, undefined],
    ["nothing", { replicas: 1 }, undefined],
  ])("%s", (_name, spec, expected) => {
    expect(schedulePeriodMs(spec)).toEqual(expected);
  });
});
