import { countsToward, expectedWrite, normalisedKey, type KillRecord } from "../../proxy/faults.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import { writeEvidence } from "../../scenario/reference-state.js";
import type { Scenario } from "../../scenario/scenario.js";
import type { SpecReference } from "../../scenario/spec-references.js";
import type { Judgement, ObserveContext } from "../check.js";
import { untilFaultActs } from "./fault-wait.js";

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
  reference: Pick<SpecReference, "namespace" | "writes">,
  ignored: readonly { group: string; resource: string }[],
): CrashLine[] {
  const scope = { namespace: reference.namespace, excludeNoOps: true };
  return reference.writes
    .filter((entry) => countsToward(scope, entry))
    .map((write, index): CrashLine => ({
      ordinal: index + 1,
      write,
      id: `#${index + 1} ${write.verb} ${normalisedKey(write)}${write.subresource ? `/${write.subresource}` : ""}`,
    }))
    .filter(({ write }) => !ignored.some((i) => i.group === write.group && i.resource === write.resource));
}

/** Where a crash at a line left the scenario, as plain data. */
export type CrashOutcome =
  /** The operator converged without a write at that position: this scenario's writes. */
  | { readonly status: "not-reached"; readonly writes: readonly WriteEntry[] }
  /** The fault matched but could not act. */
  | { readonly status: "failed"; readonly error: string }
  /** It hit a write other than the reference's. */
  | { readonly status: "diverged"; readonly hit: WriteEntry; readonly proof: readonly string[] }
  | {
      readonly status: "crashed";
      readonly hit: WriteEntry;
      readonly kill?: KillRecord;
      /** What the kill did, for the evidence. */
      readonly proof: readonly string[];
    };

/**
 * Starts the operator and the sample with a crash-after fault on the
 * line's write, and waits until it acted (or the operator converged
 * without making that write).
 */
export async function crashAtLine(
  context: Pick<ObserveContext, "deps">,
  scenario: Scenario,
  line: CrashLine,
): Promise<CrashOutcome> {
  const fault = scenario.proxy.arm({
    kind: "crash-after",
    match: { namespace: scenario.namespace, ordinal: line.ordinal, excludeNoOps: true },
    expect: expectedWrite(line.write),
  });
  await scenario.startWithSample();
  const outcome = await untilFaultActs(context, scenario, () => fault.outcome(), "the crash");
  if (outcome.status === "not-reached") {
    fault.disarm();
    return { status: "not-reached", writes: scenario.operatorWrites() };
  }
  if (outcome.status === "failed") return { status: "failed", error: outcome.error };
  const { hit, kill } = outcome.evidence;
  const proof = [
    `crash after write ${hit.seq} (${hit.verb} ${hit.resource}/${hit.name ?? ""}, answered ${hit.code}, resourceVersion ${hit.resourceVersion ?? "none"}): ${kill?.signal ?? "?"} to pids ${kill?.pids.join(", ") ?? "?"} of run ${kill?.run ?? "?"}`,
  ];
  if (outcome.status === "diverged") return { status: "diverged", hit, proof };
  return { status: "crashed", hit, ...(kill ? { kill } : {}), proof };
}

/**
 * The inconclusive verdict of a crash that missed its line (not reached,
 * another write, a kill that failed), with the reference's write and this
 * scenario's as evidence; undefined when it crashed where it was meant to. Pure.
 */
export function missedCrash(line: CrashLine, outcome: CrashOutcome): Judgement | undefined {
  const expected = writeEvidence(line.write);
  switch (outcome.status) {
    case "crashed":
      return undefined;
    case "not-reached":
      return {
        status: "inconclusive",
        message: `the operator converged without a write ${line.ordinal} like the reference's; nothing to crash after`,
        evidence: {
          writes: [expected, ...outcome.writes.map(writeEvidence)],
          notes: ["first write: the reference's; the rest: this scenario's"],
        },
      };
    case "failed":
      return { status: "inconclusive", message: `the crash could not be carried out: ${outcome.error}` };
    case "diverged":
      return {
        status: "inconclusive",
        message: `write ${line.ordinal} of this scenario was not the reference's: the crash hit another line`,
        evidence: {
          writes: [expected, writeEvidence(outcome.hit)],
          notes: ["first write: the reference's; second: the one the crash followed here", ...outcome.proof],
        },
      };
  }
}
