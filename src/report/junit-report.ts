import { waivedText, type WaiverReport } from "./waivers.js";
import { evidenceText, printable } from "./evidence-text.js";
import type { CheckReport, RunReport, ScenarioReport } from "./report-model.js";

/**
 * The run report as JUnit XML, for CI test views (GitHub test reporters,
 * Jenkins, GitLab). It validates against the Jenkins JUnit schema, the one
 * most consumers accept:
 * - one `<testsuite>` per suite (the check id before "/"), in report order;
 *   one `<testcase>` per scenario: `classname` the check id, `name` the target;
 * - failed: `<failure message="verdict" type="MUST|SHOULD">` with the evidence;
 * - skipped and inconclusive: `<skipped>` with the reason as its text (that
 *   schema allows no attribute on it), an inconclusive one prefixed
 *   "inconclusive:", its evidence in `<system-out>`;
 * - waived (a failure a waiver of the contract accepts for now): `<skipped>`
 *   with "waived by <rule> (until, was failed): <reason>; verdict: <message>",
 *   its evidence in `<system-out>`;
 * - warned (a SHOULD failure that does not fail the run): a passing
 *   testcase whose `<system-out>` starts with "WARNED";
 * - every testcase carries the report's status in `status`, which the
 *   schema allows, so no status is lost in the mapping.
 * - the contract's waivers, when it has some: a `waivers` testsuite with a
 *   testcase per waiver (classname "waiver", name its rule and check), an
 *   expired one a `<failure>` (it fails the run), a stale or not-run one
 *   `<skipped>` with what became of it, an applied one passing with it in
 *   `<system-out>`.
 * That schema has no `skipped` total on `<testsuites>`: the totals there are
 * tests, failures, errors and time; each `<testsuite>` has its `skipped`.
 */
export function renderJUnit(report: RunReport): string {
  const suites: { name: string; checks: CheckReport[] }[] = [];
  for (const check of report.checks) {
    const name = suiteOf(check.id);
    const suite = suites.find((s) => s.name === name);
    if (suite) suite.checks.push(check);
    else suites.push({ name, checks: [check] });
  }
  const scenarios = report.checks.flatMap((c) => c.scenarios);
  const shard = report.shard;
  const waivers = report.waivers ?? [];
  const expired = waivers.filter((w) => w.outcome === "expired").length;
  const root: XmlElement = {
    name: "testsuites",
    attributes: {
      name: shard ? `reconcile-conformance (shard ${shard.index}/${shard.count})` : "reconcile-conformance",
      tests: scenarios.length + waivers.length,
      failures: countOf(scenarios, "failed") + expired,
      errors: 0,
      time: seconds(report.durationMs),
    },
    children: [
      ...suites.map((suite) => suiteElement(suite.name, suite.checks, report.startedAt)),
      ...(waivers.length > 0 ? [waiverSuite(waivers, report.startedAt)] : []),
    ],
  };
  return `<?xml version="1.0" encoding="UTF-8"?>\n${serialise(root, "")}\n`;
}

function waiverSuite(waivers: readonly WaiverReport[], startedAt: string): XmlElement {
  return {
    name: "testsuite",
    attributes: {
      name: "waivers",
      tests: waivers.length,
      failures: waivers.filter((w) => w.outcome === "expired").length,
      errors: 0,
      skipped: waivers.filter((w) => w.outcome === "stale" || w.outcome === "not-run").length,
      time: seconds(0),
      timestamp: startedAt,
    },
    children: waivers.map((waiver) => {
      const outcome: XmlElement =
        waiver.outcome === "expired"
          ? {
              name: "failure",
              attributes: { message: waiver.message, type: "waiver" },
              children: [waiver.message],
            }
          : waiver.outcome === "applied"
            ? systemOut(`APPLIED: ${waiver.message}`, "")
            : { name: "skipped", children: [`${waiver.outcome}: ${waiver.message}`] };
      return {
        name: "testcase",
        attributes: {
          classname: "waiver",
          name: `${waiver.rule} ${waiver.check}`,
          time: seconds(0),
          status: waiver.outcome,
        },
        children: [outcome],
      };
    }),
  };
}

function suiteElement(name: string, checks: readonly CheckReport[], startedAt: string): XmlElement {
  const scenarios = checks.flatMap((c) => c.scenarios);
  return {
    name: "testsuite",
    attributes: {
      name,
      tests: scenarios.length,
      failures: countOf(scenarios, "failed"),
      errors: 0,
      skipped:
        countOf(scenarios, "skipped") + countOf(scenarios, "inconclusive") + countOf(scenarios, "waived"),
      // A suite's checks share its scenarios, and each reports the suite's time: the longest is the suite's.
      time: seconds(Math.max(0, ...checks.map((c) => c.durationMs))),
      timestamp: startedAt,
    },
    children: checks.flatMap((check) => check.scenarios.map((s) => testcaseElement(check, s))),
  };
}

function testcaseElement(check: CheckReport, scenario: ScenarioReport): XmlElement {
  const evidence = evidenceText(scenario.evidence);
  const children: XmlElement[] = [];
  switch (scenario.status) {
    case "failed":
      children.push({
        name: "failure",
        attributes: { message: scenario.message, type: check.level },
        children: [evidence === "" ? scenario.message : `${scenario.message}\n\n${evidence}`],
      });
      break;
    case "warned":
      children.push(systemOut(`WARNED (${check.level}): ${scenario.message}`, evidence));
      break;
    case "inconclusive":
      children.push({ name: "skipped", children: [`inconclusive: ${scenario.message}`] });
      if (evidence !== "") children.push(systemOut(`INCONCLUSIVE: ${scenario.message}`, evidence));
      break;
    case "waived": {
      const why = scenario.waived ? waivedText(scenario.waived) : "waived";
      children.push({ name: "skipped", children: [`${why}; verdict: ${scenario.message}`] });
      children.push(systemOut(`WAIVED (${check.level}): ${scenario.message}`, evidence));
      break;
    }
    case "skipped":
      children.push({ name: "skipped", children: [scenario.message] });
      break;
    case "passed":
      break;
  }
  return {
    name: "testcase",
    attributes: {
      classname: check.id,
      name: scenario.target,
      time: seconds(scenario.durationMs),
      status: scenario.status,
    },
    children,
  };
}

function systemOut(headline: string, evidence: string): XmlElement {
  return { name: "system-out", children: [evidence === "" ? headline : `${headline}\n\n${evidence}`] };
}

/** "status-stability" of "status-stability/no-avoidable-writes"; an id without "/" is its own suite. */
function suiteOf(checkId: string): string {
  const slash = checkId.indexOf("/");
  return slash < 0 ? checkId : checkId.slice(0, slash);
}

function countOf(scenarios: readonly ScenarioReport[], status: ScenarioReport["status"]): number {
  return scenarios.filter((s) => s.status === status).length;
}

function seconds(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(3);
}

interface XmlElement {
  readonly name: string;
  readonly attributes?: Readonly<Record<string, string | number>>;
  /** Text children are escaped when serialised; an element with text is written on one line. */
  readonly children?: readonly (XmlElement | string)[];
}

function serialise(element: XmlElement, indent: string): string {
  const attributes = Object.entries(element.attributes ?? {})
    .map(([name, value]) => ` ${name}="${escapeAttribute(String(value))}"`)
    .join("");
  const children = element.children ?? [];
  if (children.length === 0) return `${indent}<${element.name}${attributes}/>`;
  if (children.some((child) => typeof child === "string")) {
    const content = children.map((c) => (typeof c === "string" ? escapeText(c) : serialise(c, ""))).join("");
    return `${indent}<${element.name}${attributes}>${content}</${element.name}>`;
  }
  const inner = children.map((c) => (typeof c === "string" ? "" : serialise(c, `${indent}  `)));
  return `${indent}<${element.name}${attributes}>\n${inner.join("\n")}\n${indent}</${element.name}>`;
}

function escapeText(text: string): string {
  return printable(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Attribute values on one line: any run of whitespace (newlines included) becomes one space. */
function escapeAttribute(text: string): string {
  return escapeText(text.replace(/\s+/g, " ").trim()).replace(/"/g, "&quot;");
}
