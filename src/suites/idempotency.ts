import { countsToward, expectedWrite, normalisedKey, type KillRecord } from "../proxy/faults.js";
import type { WriteEntry } from "../proxy/write-log.js";
import { writeEvidence } from "../runner/reference-state.js";
import { NeverQuiet, type Scenario } from "../runner/scenario.js";
import type { SpecReference } from "../runner/spec-references.js";
import {
  inconclusiveFor,
  skippedResult,
  withoutReference,
  type CheckDefinition,
  type ScenarioResult,
  type Suite,
  type SuiteContext,
  type Verdict,
  verdictFor,
  inScenario,
} from "./check.js";
import { compareWithReference, describeMismatch, endStateMatches, identityLosses } from "./end-state.js";
import { untilFaultActs } from "./fault-wait.js";
import { preexistingChild, preexistingOne } from "./preexisting-child.js";
import { recreateOne, recreateSameName } from "./recreate-same-name.js";
import { ObjectKinds } from "./promised.js";
import { runawayCreation } from "./runaway-creation.js";

const crashAfterCreate: CheckDefinition = {
  id: "idempotency/crash-after-create",
  level: "MUST",
  summary:
    "killed right after a create succeeded and restarted, the operator duplicates nothing, keeps what it created and ends as the reference",
};
const crashAfterWrite: CheckDefinition = {
  id: "idempotency/crash-after-write",
  level: "MUST",
  summary:
    "killed right after any other write of its sequence and restarted, the operator ends as the reference, nothing recreated",
};

const CHECKS = [crashAfterCreate, crashAfterWrite, preexistingChild, recreateSameName];

/** One position of the baseline write sequence, where a crash goes. */
export interface CrashLine {
  /** 1-based position among the counted writes (what the fault's ordinal counts). */
  readonly ordinal: number;
  /** The reference's write at that position. */
  readonly write: WriteEntry;
  /** "#2 create services/hello": stable across runs (UIDs in names read <uid>). */
  readonly id: string;
}

/**
 * The crash lines of a reference: its writes as a crash-after fault with
 * `excludeNoOps` counts them (successful operator writes in its namespace,
 * Events, Leases, reviews, dry runs and no-ops left out), minus the kinds the
 * contract ignores (they keep their positions: the ordinals stay those the
 * fault counts).
 */
export function crashLines(
  reference: SpecReference,
  ignored: readonly { group: string; resource: string }[],
) {
  const scope = { namespace: reference.namespace, excludeNoOps: true };
  return reference.writes
    .filter((entry) => countsToward(scope, entry))
    .map((write, index): CrashLine => {
      return {
        ordinal: index + 1,
        write,
        id: `#${index + 1} ${write.verb} ${normalisedKey(write)}${write.subresource ? `/${write.subresource}` : ""}`,
      };
    })
    .filter(({ write }) => !ignored.some((i) => i.group === write.group && i.resource === write.resource));
}

/**
 * The crash-line sweep: for each write of the reference's sequence, a
 * scenario in which the operator is killed (SIGKILL to its process group)
 * the moment the API server has answered that write, before the operator
 * hears the answer; then it is restarted and must converge to the
 * reference. A create is judged by idempotency/crash-after-create, any
 * other write by idempotency/crash-after-write.
 */
export const idempotency: Suite = {
  name: "idempotency",
  checks: CHECKS,
  referencesNeeded: (selected) => (CHECKS.some((c) => selected.has(c.id)) ? [0] : []),
  async run(context: SuiteContext, selected): Promise<ScenarioResult[]> {
    if (!CHECKS.some((c) => selected.has(c.id))) return [];
    const started = context.clock.now();
    let reference: SpecReference;
    try {
      reference = await context.references.forSpec(0, context.progress);
    } catch (error) {
      if (error instanceof NeverQuiet) {
        const duplicates = duplicatesWithoutCrash(error, selected, context.clock.now() - started);
        if (duplicates) return duplicates;
      }
      return withoutReference(error, CHECKS, selected, context.clock.now() - started);
    }
    const lines = crashLines(reference, context.deps.contract.ignoreWrites);
    const results: ScenarioResult[] = [];
    // Every scenario of the suite is independent of the others: one list, side by side.
    const tasks: (() => Promise<ScenarioResult>)[] = [];
    for (const check of [crashAfterCreate, crashAfterWrite]) {
      if (!selected.has(check.id)) continue;
      const mine = lines.filter((l) => (l.write.verb === "create") === (check === crashAfterCreate));
      if (mine.length === 0) {
        results.push(
          skippedResult(
            check.id,
            "write sequence",
            check === crashAfterCreate
              ? "the operator created nothing on its way to the reference"
              : "the operator made no write but creates on its way to the reference",
          ),
        );
      }
      for (const line of mine) {
        tasks.push(() => {
          context.progress(`crash after write ${line.id}`);
          return crashOne(context, check, line, reference);
        });
      }
    }
    if (selected.has(preexistingChild.id)) {
      if (reference.children.length === 0) {
        results.push(
          skippedResult(
            preexistingChild.id,
            "children",
            "the operator created no child on its way to the reference: none can exist first",
          ),
        );
      }
      for (const child of reference.children) {
        tasks.push(() => {
          context.progress(`a pre-existing ${child.ref.kind}/${child.ref.name}`);
          return preexistingOne(context, child);
        });
      }
    }
    if (selected.has(recreateSameName.id)) tasks.push(() => recreateOne(context, reference));
    results.push(...(await context.sideBySide(tasks, (task) => task())));
    return results;
  },
};

/** Where a crash at a line left the scenario: crashed (with the fault's proof), or a verdict already. */
export type CrashAtLine =
  | { readonly crashed: true; readonly hit: WriteEntry; readonly kill?: KillRecord; readonly proof: string[] }
  | { readonly crashed: false; readonly verdict: ScenarioResult };

/**
 * Starts the operator and the sample with a crash-after fault on the
 * line's write, and waits for it. A crash that did not hit the reference's
 * write (not reached, another write, a kill that failed) is an inconclusive
 * verdict, with the reference's write and this scenario's as evidence.
 */
export async function crashAtLine(
  context: SuiteContext,
  scenario: Scenario,
  line: CrashLine,
  result: Verdict,
): Promise<CrashAtLine> {
  const fault = scenario.proxy.arm({
    kind: "crash-after",
    match: { namespace: scenario.namespace, ordinal: line.ordinal, excludeNoOps: true },
    expect: expectedWrite(line.write),
  });
  await scenario.startWithSample();
  const outcome = await untilFaultActs(context, scenario, () => fault.outcome(), "the crash");
  const expected = writeEvidence(line.write);
  if (outcome.status === "not-reached") {
    fault.disarm();
    const verdict = result(
      "inconclusive",
      `the operator converged without a write ${line.ordinal} like the reference's; nothing to crash after`,
      {
        writes: [expected, ...scenario.operatorWrites().map(writeEvidence)],
        notes: ["first write: the reference's; the rest: this scenario's"],
      },
    );
    return { crashed: false, verdict };
  }
  if (outcome.status === "failed") {
    const verdict = result("inconclusive", `the crash could not be carried out: ${outcome.error}`);
    return { crashed: false, verdict };
  }
  const { hit, kill } = outcome.evidence;
  const proof = [
    `crash after write ${hit.seq} (${hit.verb} ${hit.resource}/${hit.name ?? ""}, answered ${hit.code}, resourceVersion ${hit.resourceVersion ?? "none"}): ${kill?.signal ?? "?"} to pids ${kill?.pids.join(", ") ?? "?"} of run ${kill?.run ?? "?"}`,
  ];
  if (outcome.status === "diverged") {
    const verdict = result(
      "inconclusive",
      `write ${line.ordinal} of this scenario was not the reference's: the crash hit another line`,
      {
        writes: [expected, writeEvidence(hit)],
        notes: ["first write: the reference's; second: the one the crash followed here", ...proof],
      },
    );
    return { crashed: false, verdict };
  }
  return { crashed: true, hit, ...(kill ? { kill } : {}), proof };
}

async function crashOne(
  context: SuiteContext,
  check: CheckDefinition,
  line: CrashLine,
  reference: SpecReference,
): Promise<ScenarioResult> {
  const result = verdictFor(check, line.id, context.clock);
  return inScenario(context, `crash-${line.ordinal}`, result, async (scenario) => {
    const crash = await crashAtLine(context, scenario, line, result);
    if (!crash.crashed) return crash.verdict;
    const { hit, proof } = crash;

    context.progress(`restarting the operator after the crash at ${line.id}`);
    await scenario.restartOperator();
    await scenario.converge("convergence after the restart");

    const comparison = await compareWithReference(scenario, reference, context.deps.contract);
    // What the operator had created before the crash must be the same objects after it.
    const { losses: recreated, excused } = identityLosses(
      scenario.operatorWrites({ effect: "created" }).filter((e) => e.seq <= hit.seq),
      comparison,
      // Kinds from the reference too: a gone object may have no live namesake to tell its kind.
      new ObjectKinds(context.deps.contract, [...reference.children, ...comparison.children]),
    );
    const evidence = {
      writes: scenario.operatorWrites({ after: hit.seq - 1 }).map(writeEvidence),
      ...(comparison.diffs.length > 0 ? { diffs: comparison.diffs } : {}),
      notes: [...proof, ...recreated, ...excused],
    };
    const problems = [...(endStateMatches(comparison) ? [] : [describeMismatch(comparison)]), ...recreated];
    if (problems.length > 0) {
      return result("failed", `after the crash and restart: ${problems.join("; ")}`, {
        ...evidence,
        operatorLog: await scenario.operator.logTail(10),
      });
    }
    return result(
      "passed",
      `restarted after the crash, it converged to the reference: no duplicate, ${comparison.children.length} child(ren) as the reference has them, none recreated${excused.length > 0 ? ` but ${excused.length} the contract's promises allow (see the notes)` : ""}`,
      evidence,
    );
  });
}

/**
 * The sample never converged because the operator kept creating objects of
 * one name pattern (a generateName, or a name derived from a UID): it
 * duplicates children without any crash, which is what crash-after-create
 * guards against. Judged from the reference's own writes; the crash lines
 * themselves cannot run without a reference, so crash-after-write stays
 * inconclusive. Undefined when the writes show no such creation.
 */
function duplicatesWithoutCrash(
  error: NeverQuiet,
  selected: ReadonlySet<string>,
  durationMs: number,
): ScenarioResult[] | undefined {
  const runaway = runawayCreation(error.writes, normalisedKey);
  if (!runaway) return undefined;
  const creates = error.writes.filter((e) => e.effect === "created");
  return [
    ...(selected.has(crashAfterCreate.id)
      ? [
          {
            check: crashAfterCreate.id,
            target: "reference state",
            status: "failed" as const,
            message: `without any crash, the operator created ${runaway[0]} ${runaway[1]} times while the sample was converging, and never fell quiet: every pass creates another (${error.message})`,
            durationMs,
            evidence: {
              writes: creates.slice(-10).map(writeEvidence),
              notes: [
                `${creates.length} create(s) in the wait; the last ${Math.min(10, creates.length)} shown`,
                ...error.notes,
              ],
            },
          },
        ]
      : []),
    ...inconclusiveFor(
      [crashAfterWrite, preexistingChild, recreateSameName],
      selected,
      "reference state",
      error.message,
      durationMs,
      error.notes,
    ),
  ];
}
