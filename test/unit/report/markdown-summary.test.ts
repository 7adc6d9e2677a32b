import { describe, expect, it } from "vitest";
import { renderSummary } from "../../../src/report/console-reporter.js";
import { mermaidLabel, renderMarkdownSummary } from "../../../src/report/markdown-summary.js";
import type { Evidence } from "../../../src/report/report-model.js";
import { reportFixture } from "../../support/report-fixture.js";
import { writeEntry } from "../../support/write-entry.js";

const { check, scenario, runReport } = reportFixture({
  checkMs: 2500,
  scenarioMs: 100,
  run: {
    durationMs: 83_000,
    contract: "examples/webapp-operator/reconcile-conformance.yaml",
    cluster: { provider: "kwok", name: "rc-1" },
  },
});

const report = runReport([
  check("cluster/optimistic-concurrency", "MUST", "passed", [
    scenario("ConfigMap stale replace", "passed", "409 as expected"),
  ]),
  check("conflict/child-update", "MUST", "failed", [
    scenario(
      "ConfigMap/web;rm -rf #1 (update)",
      "failed",
      "erased the concurrent <script>x</script> | change",
      {
        writes: [
          writeEntry({ seq: 7, actor: "kit", verb: "patch", name: "web;rm #1", fault: "mutate-before" }),
          writeEntry({
            seq: 8,
            name: "web;rm #1",
            sentResourceVersion: "41",
            code: 409,
            reason: "Conflict",
            effect: "rejected",
          }),
          { seq: 9, actor: "operator", write: "update configmaps/web%%;x", code: 200, effect: "changed" },
          "not a write at all",
        ],
        diffs: [{ object: "ConfigMap/web", path: "data.a|b", expected: "x|y", actual: null }],
        notes: ["the kit wrote update 1 just before the operator's update #8", "# not a heading"],
        operatorLog: ["reconciling ``` web", "done"],
      },
    ),
    scenario("Service/web (update)", "passed", "kept the annotation"),
  ]),
  check("status-stability/no-redundant-writes", "SHOULD", "warned", [
    scenario("restart and foreign touches", "warned", "2 no-op writes", {
      writes: [writeEntry({ seq: 3, effect: "no-op" })],
    }),
  ]),
  check("status-stability/observed-generation", "MUST", "skipped", [
    scenario("restart and foreign touches", "skipped", "the custom resource reports no observedGeneration"),
  ]),
  check("idempotency/crash-after-create", "MUST", "inconclusive", [
    scenario("#1 create deployments/web", "inconclusive", "the operator never converged", {
      notes: ["last reason: Ready is False"],
    }),
  ]),
]);

function mermaidBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```mermaid\n([\s\S]*?)\n```/g)].map((m) => m[1] ?? "");
}

/** The text Mermaid reads as a message or note (after its "X->>Y:" or "Note over X,Y:"). */
function mermaidTexts(diagram: string): string[] {
  return diagram
    .split("\n")
    .flatMap((line) => /^\s+(?:\w+-{1,2}>>\w+|Note over \w+,\w+): (.*)$/.exec(line)?.[1] ?? []);
}

function bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

describe("renderMarkdownSummary", () => {
  const markdown = renderMarkdownSummary(report, { docsBaseUrl: "https://github.com/o/r/blob/v1.2.0/" });

  it("says the run's notices once, under the headline, before the checks (and the console summary at its top)", () => {
    const notices = [
      "no check judged any child: the operator created none on its way to any reference state",
      "the operator acts on a clock of its own: 2 write(s) <of> its lives",
    ];
    const noted = renderMarkdownSummary({ ...report, notices });
    const at = (text: string) => noted.indexOf(text);
    expect(at("> **Note:** no check judged any child")).toBeGreaterThan(at("**Contract:**"));
    expect(at("> **Note:** the operator acts on a clock of its own")).toBeLessThan(at("| Check |"));
    expect(noted).toContain("2 write(s) &#60;of&#62; its lives");
    expect(markdown).not.toContain("**Note:**");
    const console = renderSummary({ ...report, notices });
    expect(console.split("\n").slice(1, 3)).toEqual(notices.map((n) => `NOTE: ${n}`));
    expect(renderSummary(report)).not.toContain("NOTE:");
  });

  it("opens with the overall result, the counts per status, the time, the contract and the cluster", () => {
    expect(markdown.startsWith("## ❌ reconcile-conformance: failed\n")).toBe(true);
    expect(markdown).toContain(
      "**Checks:** 1 passed · 1 failed · 1 warned · 1 inconclusive · 1 skipped (6 scenario(s)) · **Time:** 1m 23s",
    );
    expect(markdown).toContain(
      "**Contract:** <code>examples/webapp-operator/reconcile-conformance.yaml</code> · **Cluster:** kwok (rc-1)",
    );
    expect(markdown).not.toContain("**Shard:**");
    // Named from the job's workspace, as the annotations name it, when it lies under it.
    const absolute = { ...report, contract: "/home/runner/work/r/r/op/reconcile-conformance.yaml" };
    expect(renderMarkdownSummary(absolute, { baseDir: "/home/runner/work/r/r" })).toContain(
      "**Contract:** <code>op/reconcile-conformance.yaml</code>",
    );
    expect(renderMarkdownSummary(absolute, { baseDir: "/elsewhere" })).toContain(
      "**Contract:** <code>/home/runner/work/r/r/op/reconcile-conformance.yaml</code>",
    );
    expect(renderMarkdownSummary({ ...report, shard: { index: 2, count: 3 } })).toContain(
      "**Shard:** 2 of 3",
    );
  });

  it("has one table row per check, linked to its docs", () => {
    const rows = markdown.split("\n").filter((line) => /^\| \[/.test(line));
    expect(rows).toEqual([
      "| [cluster/optimistic-concurrency](https://github.com/o/r/blob/v1.2.0/docs/checks/cluster/optimistic-concurrency.md) | MUST | ✅ passed | 2.5s |",
      "| [conflict/child-update](https://github.com/o/r/blob/v1.2.0/docs/checks/conflict/child-update.md) | MUST | ❌ failed (1 of 2) | 2.5s |",
      "| [status-stability/no-redundant-writes](https://github.com/o/r/blob/v1.2.0/docs/checks/status-stability/no-redundant-writes.md) | SHOULD | ⚠️ warned (1 of 1) | 2.5s |",
      "| [status-stability/observed-generation](https://github.com/o/r/blob/v1.2.0/docs/checks/status-stability/observed-generation.md) | MUST | ⏭️ skipped | 2.5s |",
      "| [idempotency/crash-after-create](https://github.com/o/r/blob/v1.2.0/docs/checks/idempotency/crash-after-create.md) | MUST | ❔ inconclusive (1 of 1) | 2.5s |",
    ]);
  });

  it("counts a check's scenarios left to other shards in its result", () => {
    const sharded = runReport([
      {
        ...check("drift/deleted-child", "MUST", "passed", [scenario("Service/web", "passed", "ok")]),
        elsewhere: ["a", "b"],
      },
    ]);
    expect(renderMarkdownSummary(sharded)).toContain("| ✅ passed; 2 in other shards |");
  });

  it("has a collapsed block per failed, warned or inconclusive scenario, and none for the others", () => {
    const summaries = [...markdown.matchAll(/<details><summary>(.*)<\/summary>/g)].map((m) => m[1]);
    expect(summaries).toEqual([
      "❌ <code>conflict/child-update#ConfigMap/web;rm -rf #1 (update)</code>: erased the concurrent &#60;script&#62;x&#60;/script&#62; &#124; change",
      "⚠️ <code>status-stability/no-redundant-writes#restart and foreign touches</code>: 2 no-op writes",
      "❔ <code>idempotency/crash-after-create##1 create deployments/web</code>: the operator never converged",
    ]);
    expect(markdown.match(/<\/details>/g)).toHaveLength(3);
    expect(markdown).not.toContain("409 as expected");
    expect(markdown).not.toContain("kept the annotation");
    expect(markdown).not.toContain("reports no observedGeneration");
  });

  it("shows the verdict, the docs link, the fault point, the notes and the field diff", () => {
    expect(markdown).toContain(
      "**Verdict** (MUST, failed): erased the concurrent &#60;script&#62;x&#60;/script&#62; &#124; change",
    );
    expect(markdown).toContain(
      "Documentation: [docs/checks/conflict/child-update.md](https://github.com/o/r/blob/v1.2.0/docs/checks/conflict/child-update.md)",
    );
    expect(markdown).toContain(
      "**Fault point:**\n\n- &#35;7 kit patch deployments.apps/web;rm #1 -&#62; 200: changed &#91;fault mutate-before&#93;",
    );
    expect(markdown).toContain(
      "- the kit wrote update 1 just before the operator's update #8\n- &#35; not a heading",
    );
    expect(markdown).toContain(
      "| Object | Path | Expected | Actual |\n| --- | --- | --- | --- |\n| ConfigMap/web | data.a&#124;b | <code>&#34;x&#124;y&#34;</code> | <code>null</code> |",
    );
    expect(markdown).not.toContain("<script>");
  });

  it("fences the operator log past its longest run of backticks, and shows an odd write-log entry as JSON", () => {
    expect(markdown).toContain("````text\nreconciling ``` web\ndone\n````");
    expect(markdown).toContain('```json\n"not a write at all"\n```');
  });

  it("draws the writes as a Mermaid sequence diagram with sanitised labels", () => {
    const [diagram, warnedDiagram] = mermaidBlocks(markdown);
    expect(mermaidBlocks(markdown)).toHaveLength(2);
    expect(diagram?.split("\n").slice(0, 4)).toEqual([
      "sequenceDiagram",
      "    participant Operator",
      "    participant Kit",
      "    participant API as API server",
    ]);
    expect(diagram).toContain("    Kit->>API: #35;7 patch deployments.apps/web#59;rm #35;1 #8594; 200\n");
    expect(diagram).toContain("    API-->>Kit: changed\n    Note over Kit,API: fault mutate-before\n");
    expect(diagram).toContain(
      "    Operator->>API: #35;8 update deployments.apps/web#59;rm #35;1 rv 41 #8594; 409 Conflict\n    API-->>Operator: rejected\n",
    );
    expect(diagram).toContain("    Operator->>API: #35;9 update configmaps/web#37;#37;#59;x #8594; 200\n");
    expect(warnedDiagram).toContain("    Operator->>API: #35;3 update deployments.apps/web #8594; 200\n");
    const texts = [...mermaidTexts(diagram ?? ""), ...mermaidTexts(warnedDiagram ?? "")];
    expect(texts).toHaveLength(9);
    // Once Mermaid's own #NNN; codes are taken out, nothing it reads as syntax is left.
    for (const text of texts) expect(text.replace(/#\d+;/g, "")).not.toMatch(/[;#:%<>&\n]/);
  });

  it("encodes what Mermaid cannot take in a label as #NNN; codes", () => {
    expect(mermaidLabel("a;b#c:d%%e<f>g&h\ni    j")).toBe("a#59;b#35;c#58;d#37;#37;e#60;f#62;g#38;h i j");
    expect(mermaidLabel("wrap: x")).toBe("wrap#58; x");
    expect(mermaidLabel("Grüße 🚀")).toBe("Grüße #128640;");
    expect(mermaidLabel("")).toBe("-");
    expect(mermaidLabel("x".repeat(500))).toHaveLength(120 + "#8230;".length - 1);
  });

  it("keeps a fault write in the diagram when it shortens a long one", () => {
    const writes = [
      writeEntry({ seq: 1, actor: "kit", fault: "kill-after" }),
      ...Array.from({ length: 60 }, (_, i) => writeEntry({ seq: i + 2 })),
    ];
    const long = runReport([
      check("idempotency/crash-after-write", "MUST", "failed", [scenario("t", "failed", "m", { writes })]),
    ]);
    const [diagram] = mermaidBlocks(renderMarkdownSummary(long, { artifactHint: "the artifact" }));
    expect(diagram).toContain("Note over Operator,API: 21 earlier write(s) not shown#58; see the artifact");
    expect(diagram).toContain("Note over Kit,API: fault kill-after");
    expect(diagram).toContain("#35;61 update");
    expect(diagram).not.toContain("#35;2 update");
    expect(diagram?.match(/->>API/g)).toHaveLength(40);
  });

  it("has no evidence section when every check passed", () => {
    const passed = renderMarkdownSummary(runReport([report.checks[0] ?? check("x/y", "MUST", "passed", [])]));
    expect(passed).not.toContain("<details>");
    expect(passed).not.toContain("### Evidence");
  });
});

// Building and cutting a report of megabytes is pure work; on a shared 2-core machine busy with
// clusters it has taken more than vitest's default 5 s. The time is a bench's business, not these tests'.
const BIG_REPORT_TIMEOUT_MS = 60_000;

describe("the job summary size limit", () => {
  // Notes of 4-byte characters: a limit counted in UTF-16 units instead of UTF-8 bytes would be overrun.
  const hugeEvidence: Evidence = {
    notes: Array.from({ length: 30 }, () => "🚀".repeat(999)),
    operatorLog: Array.from({ length: 100 }, (_, i) => `log ${i} ${"x".repeat(400)}`),
    writes: Array.from({ length: 200 }, (_, i) => writeEntry({ seq: i + 1 })),
  };
  // Targets of one length, so that every block has the same size.
  const target = (i: number) => `Deployment/web-${String(i).padStart(3, "0")} spec.replicas`;
  const huge = runReport([
    check(
      "drift/managed-field",
      "MUST",
      "failed",
      Array.from({ length: 200 }, (_, i) => scenario(target(i), "failed", "drifted", hugeEvidence)),
    ),
  ]);
  /** The evidence block of one scenario. */
  const blockOf = (markdown: string, name: string) =>
    markdown.split("<details>").find((block) => block.includes(`#${name}</code>`)) ?? "";

  it(
    "is respected for a report whose evidence takes megabytes, with a notice naming the artifact",
    () => {
      expect(bytes(JSON.stringify(huge))).toBeGreaterThan(5_000_000);
      const markdown = renderMarkdownSummary(huge, { artifactHint: "the report-dir artifact: report.json" });
      expect(bytes(markdown)).toBeLessThanOrEqual(1_048_576);
      expect(bytes(markdown)).toBeGreaterThan(800_000);
      expect(markdown).toMatch(
        /> \*\*Shortened to fit GitHub's job summary limit \(1000000 bytes\):\*\* the evidence of \d+ scenario\(s\) is left out here; it is all in the report-dir artifact: report\.json\./,
      );
      // The table is whole, and every scenario is still named with its verdict.
      expect(markdown).toContain(
        "| [drift/managed-field](docs/checks/drift/managed-field.md) | MUST | ❌ failed (200 of 200) | 2.5s |",
      );
      expect(markdown.match(/<details>/g)).toHaveLength(200);
      expect(markdown).toContain(
        "_Evidence left out to fit the job summary: see the report-dir artifact: report.json._",
      );
      // Blocks of equal size: the latest are shortened first.
      expect(blockOf(markdown, target(0))).toContain("```mermaid");
      expect(blockOf(markdown, target(199))).not.toContain("```mermaid");
      expect(blockOf(markdown, target(199))).toContain("_Evidence left out");
    },
    BIG_REPORT_TIMEOUT_MS,
  );

  it(
    "is respected for any limit, the latest blocks left out when even the short ones do not fit",
    () => {
      for (const maxBytes of [5_000, 20_000, 100_000]) {
        const markdown = renderMarkdownSummary(huge, { maxBytes });
        expect(bytes(markdown)).toBeLessThanOrEqual(maxBytes);
        expect(markdown).toContain("Shortened to fit");
      }
      const small = renderMarkdownSummary(huge, { maxBytes: 20_000 });
      expect(small).toMatch(/_\d+ more scenario\(s\) not shown: see the JSON report \(report\.json\)\._/);
      expect(small).toContain(target(0));
      expect(small).not.toContain(target(199));
    },
    BIG_REPORT_TIMEOUT_MS,
  );

  it("shortens the largest block first and keeps the evidence of the small ones", () => {
    const small = (i: number) =>
      scenario(`small-${i}`, "failed", "m", { writes: [writeEntry({ seq: i, name: `small-${i}` })] });
    const mixed = runReport([
      check("drift/managed-field", "MUST", "failed", [
        small(1),
        scenario("big", "failed", "m", hugeEvidence),
        small(2),
      ]),
    ]);
    const full = renderMarkdownSummary(mixed, { maxBytes: 10_000_000 });
    expect(full).not.toContain("Shortened to fit");
    const markdown = renderMarkdownSummary(mixed, { maxBytes: 20_000 });
    expect(bytes(full)).toBeGreaterThan(20_000);
    expect(bytes(markdown)).toBeLessThanOrEqual(20_000);
    expect(markdown).toContain("the evidence of 1 scenario(s) is left out");
    expect(
      mermaidBlocks(markdown).map((d) => /#35;\d+ update deployments\.apps\/(small-\d)/.exec(d)?.[1]),
    ).toEqual(["small-1", "small-2"]);
  });

  it("caps a block's notes, log lines and writes and says where the rest is", () => {
    const one = runReport([
      check("drift/managed-field", "MUST", "failed", [scenario("t", "failed", "m", hugeEvidence)]),
    ]);
    const markdown = renderMarkdownSummary(one, { maxBytes: 10_000_000, artifactHint: "the artifact" });
    expect(markdown).not.toContain("Shortened to fit");
    expect(markdown).toContain("**Operator log** (last 40 line(s)):");
    expect(markdown).toContain("_60 more earlier log line(s) in the artifact._");
    expect(markdown).toContain("log 99 ");
    expect(markdown).not.toContain("log 59 ");
    expect(markdown).toContain("Note over Operator,API: 160 earlier write(s) not shown");
    expect(bytes(markdown)).toBeLessThan(400_000);
  });
});
