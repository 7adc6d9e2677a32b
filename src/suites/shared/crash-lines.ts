import type { Contract } from "../../contract/load-contract.js";
import { clockFamilies, clockFamily, describeClockWrite, withinHorizon } from "../../scenario/clock-marks.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import {
  countsToward,
  expectedWrite,
  normalisedKey,
  normalisedName,
  type KillRecord,
} from "../../proxy/faults.js";
import { unpairedResource, writeKey, type ChildRoles } from "../../scenario/child-roles.js";
import { writeEvidence } from "../../scenario/reference-state.js";
import { Inconclusive, type Scenario } from "../../scenario/scenario.js";
import type { SpecReference } from "../../scenario/spec-references.js";
import type { Judgement, ObserveContext } from "../check.js";
import { untilFaultActs } from "./fault-wait.js";

/**
 * One write of the reference's sequence, where a crash goes. It is known by
 * what it is, not by its position: the nth write of its meaning (what it
 * does to which role of object, and for a status write what it claims), so
 * an operator that writes the same thing once more or once less while its
 * cache catches up still has the line.
 */
export interface CrashLine {
  /** 1-based position among the reference's counted writes: for the id and the scenario's name. */
  readonly ordinal: number;
  /** The reference's write at that position. */
  readonly write: WriteEntry;
  /**
   * "create services/hello", "update widgets.example.com/w/status Ready=False (2nd)": its meaning
   * and occurrence, the same in every run however the writes around it are timed (the target's name).
   */
  readonly id: string;
  /** What the write is (writeMeaning): the fault acts on the `occurrence`th write of this meaning. */
  readonly meaning?: string;
  readonly occurrence?: number;
  /**
   * Why no scenario can count on it, when a second fault-free life wrote
   * this meaning fewer times: how often it is written depends on timing.
   */
  readonly timing?: string;
  /**
   * Why no scenario can find this line, when its write is to a child whose
   * name the two reference lives could not pair: its meaning names the
   * reference's literal name, which another life does not have.
   */
  readonly unpaired?: string;
}

/**
 * What a write is, the same in every life: "create secrets/orders-auth-*",
 * "update widgets.example.com/w/status Ready=False": its effect (a create
 * by any verb is a create) or verb, its object's role (writeKey) and
 * subresource, and for a status write the conditions it claims.
 */
export function writeMeaning(write: WriteEntry, roles: ChildRoles | undefined): string {
  const verb = write.effect === "created" ? "create" : write.verb;
  const subresource = write.subresource ? `/${write.subresource}` : "";
  const claims = write.subresource === "status" ? claimsOf(write.body) : "";
  return `${verb} ${writeKey(roles, write)}${subresource}${claims ? ` ${claims}` : ""}`;
}

/** "2nd", "3rd", "11th". */
function ordinalWord(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" }[n % 10] ?? "th");
  return `${n}${suffix}`;
}

/** "Available=True,Progressing=False": a status body's conditions, by type. */
function claimsOf(body: unknown): string {
  const conditions = (body as { status?: { conditions?: unknown } } | undefined)?.status?.conditions;
  if (!Array.isArray(conditions)) return "";
  return conditions
    .map((c: { type?: unknown; status?: unknown }) => `${String(c.type)}=${String(c.status)}`)
    .sort()
    .join(",");
}

/**
 * The crash lines of a reference: its writes as a crash-after fault with
 * `excludeNoOps` counts them (successful operator writes in its namespace,
 * Events, Leases, reviews, dry runs and no-ops left out), minus the kinds the
 * contract ignores. With a second life's writes, a line whose meaning that
 * life wrote fewer times is marked `timing`; so is a write the operator's
 * clock made after the contract's clock horizon (or with none).
 */
export function crashLines(
  reference: Pick<SpecReference, "namespace" | "writes" | "roles" | "secondLife">,
  contract: Pick<Contract, "ignoreWrites" | "clock">,
): CrashLine[] {
  const ignored = contract.ignoreWrites;
  const { roles, secondLife } = reference;
  const counted = (life: { readonly namespace: string; readonly writes: readonly WriteEntry[] }) =>
    life.writes.filter((entry) => countsToward({ namespace: life.namespace, excludeNoOps: true }, entry));
  const second = new Map<string, number>();
  for (const write of secondLife ? counted(secondLife) : []) {
    const meaning = writeMeaning(write, roles);
    second.set(meaning, (second.get(meaning) ?? 0) + 1);
  }
  const seen = new Map<string, number>();
  const families = clockFamilies([...reference.writes, ...(secondLife?.writes ?? [])]);
  return counted(reference)
    .map((write, index): CrashLine => {
      const meaning = writeMeaning(write, roles);
      const occurrence = (seen.get(meaning) ?? 0) + 1;
      seen.set(meaning, occurrence);
      const other = second.get(meaning) ?? 0;
      const unpaired = unpairedChild(roles, write);
      // A tick within the clock's horizon is in every life (Scenario.converge waits for it): a line.
      const kin =
        !write.clock && contract.clock.horizonMs === undefined && families.has(clockFamily(write) ?? "");
      const timing =
        write.clock && !withinHorizon(write.clock, contract.clock.horizonMs)
          ? `the operator's clock made it (${describeClockWrite(write)}), not the spec: whether a scenario's life reaches that tick depends on when it runs`
          : kin
            ? `it is of a family the operator's clock made (${clockFamily(write)?.split("/").at(-1) ?? ""}*): whether a scenario's life reaches that tick depends on when it runs`
            : !unpaired && secondLife && other < occurrence
              ? `a second fault-free life wrote "${meaning}" ${other === 0 ? "never" : `only ${other} time(s)`}, this one at least ${occurrence}: how often it is written depends on timing, so no scenario can count on it`
              : undefined;
      return {
        ordinal: index + 1,
        write,
        id: occurrence === 1 ? meaning : `${meaning} (${ordinalWord(occurrence)})`,
        meaning,
        occurrence,
        ...(timing ? { timing } : {}),
        ...(unpaired ? { unpaired } : {}),
      };
    })
    .filter(({ write }) => !ignored.some((i) => i.group === write.group && i.resource === write.resource));
}

/** Why a write's object cannot be found in another life (a child of a kind whose names were not paired), or undefined. */
function unpairedChild(roles: ChildRoles | undefined, write: WriteEntry): string | undefined {
  if (!write.name || !unpairedResource(roles, write) || writeKey(roles, write) !== normalisedKey(write)) {
    return undefined;
  }
  const name = normalisedName(write);
  const unpaired = roles?.unpaired.find(
    (u) => u.group === write.group && u.resource === write.resource && u.names.includes(name),
  );
  if (!unpaired) return undefined;
  return `the write is to ${write.resource}/${write.name}, whose name the two reference lives could not pair (${unpaired.why}; ${unpaired.names.join(", ")}): no other life has a write of that name to crash after`;
}

/** Throws Inconclusive for a line no scenario can find (CrashLine.unpaired): before a scenario is opened for it. */
export function assertFindable(line: CrashLine): void {
  if (line.unpaired) throw new Inconclusive(line.unpaired);
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
 * Arms a crash-after fault on the line's write, makes the write that sets
 * the line's path going (`stimulus`: by default the operator's start and
 * the sample's create; for an update path, the update), and waits until
 * the fault acted (or the operator converged without making that write).
 */
export async function crashAtLine(
  context: Pick<ObserveContext, "deps">,
  scenario: Scenario,
  line: CrashLine,
  roles: ChildRoles | undefined,
  stimulus: () => Promise<unknown> = () => scenario.startWithSample(),
): Promise<CrashOutcome> {
  // Lines recorded before meanings (no `meaning`) crash by position, as they did.
  const fault = line.meaning
    ? scenario.proxy.arm({
        kind: "crash-after",
        match: { namespace: scenario.namespace, nth: line.occurrence ?? 1, excludeNoOps: true },
        select: (entry) => writeMeaning(entry, roles) === line.meaning,
      })
    : scenario.proxy.arm({
        kind: "crash-after",
        match: { namespace: scenario.namespace, ordinal: line.ordinal, excludeNoOps: true },
        expect: expectedWrite(line.write),
      });
  await stimulus();
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
      if (line.meaning && (line.write.subresource === "status" || (line.occurrence ?? 1) > 1)) {
        // How often an operator writes its status, or writes the same thing again, varies with
        // timing (a condition while its cache catches up): a life without that write has no line
        // there. Nothing to judge, and no sign of a fault either.
        return {
          status: "skipped",
          message: `this life never wrote "${line.meaning}" ${(line.occurrence ?? 1) === 1 ? "" : `${line.occurrence} times `}on its way to convergence, as the reference did: how often an operator writes its status or repeats a write varies with timing; nothing to crash after`,
          evidence: {
            writes: [expected, ...outcome.writes.map(writeEvidence)],
            notes: ["first write: the reference's; the rest: this scenario's"],
          },
        };
      }
      return {
        status: "inconclusive",
        message: line.meaning
          ? `the operator converged without writing "${line.meaning}" ${(line.occurrence ?? 1) === 1 ? "once" : `${line.occurrence} times`}, as the reference did; nothing to crash after`
          : `the operator converged without a write ${line.ordinal} like the reference's; nothing to crash after`,
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
