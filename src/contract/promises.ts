import { parsePath, pathWithin, type ObjectPath } from "../util/object-paths.js";
import type { ContractDocument } from "./contract-schema.js";
import { IDENTITIES } from "./contract-schema.js";

/**
 * The contract's `promises`, resolved: what each object keeps stable and
 * which of its fields the operator rewrites on purpose. Checks ask
 * `promisesFor(kind, name)`; an object no entry names promises everything.
 * Pure.
 */

export type Identity = (typeof IDENTITIES)[number];

export interface VolatileField {
  readonly path: ObjectPath;
  /** As written in the contract. */
  readonly text: string;
  readonly reason: string;
  /** Where it is declared, e.g. "promises[0]". */
  readonly rule: string;
}

export interface PromiseRule {
  /** "promises[0]" */
  readonly rule: string;
  readonly kind: string;
  readonly name?: string;
  readonly keeps: readonly Identity[];
  readonly reason?: string;
  readonly volatile: readonly VolatileField[];
}

/** What one object promises. */
export interface ObjectPromises {
  /** Each withdrawn identity, with why and where ("promises[1]: recreated on every rotation"). */
  readonly withdrawn: ReadonlyMap<Identity, string>;
  readonly volatile: readonly VolatileField[];
}

export function resolvePromises(entries: ContractDocument["promises"]): PromiseRule[] {
  return entries.map((entry, index) => {
    const rule = `promises[${index}]`;
    return {
      rule,
      kind: entry.kind,
      ...(entry.name === undefined ? {} : { name: entry.name }),
      keeps: entry.keeps,
      ...(entry.reason === undefined ? {} : { reason: entry.reason }),
      volatile: entry.volatile.map((v) => ({
        path: parsePath(v.path),
        text: v.path,
        reason: v.reason,
        rule,
      })),
    };
  });
}

/** Whether a name matches a pattern in which "*" stands for any run of characters. */
export function globMatches(pattern: string, text: string): boolean {
  const parts = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*")}$`, "s").test(text);
}

export function promisesFor(rules: readonly PromiseRule[], kind: string, name: string): ObjectPromises {
  const withdrawn = new Map<Identity, string>();
  const volatile: VolatileField[] = [];
  for (const rule of rules) {
    if (rule.kind !== kind || (rule.name !== undefined && !globMatches(rule.name, name))) continue;
    for (const identity of IDENTITIES) {
      if (!rule.keeps.includes(identity) && !withdrawn.has(identity)) {
        withdrawn.set(identity, `${rule.rule}: ${rule.reason ?? ""}`);
      }
    }
    volatile.push(...rule.volatile);
  }
  return { withdrawn, volatile };
}

/**
 * Whether every change a write made lies in a volatile field of its object:
 * `unknown` when the write log could not tell which fields it changed (then
 * it is neither excused nor counted by a check that has volatile fields to
 * honour: the check says it could not tell).
 */
export function volatileOnly(
  promises: ObjectPromises,
  changed: readonly string[] | undefined,
): { readonly only: true; readonly fields: readonly VolatileField[] } | { readonly only: false } | "unknown" {
  if (promises.volatile.length === 0) return { only: false };
  if (changed === undefined) return "unknown";
  if (changed.length === 0) return { only: false };
  const fields = new Set<VolatileField>();
  for (const text of changed) {
    const path = parsePath(text);
    const field = promises.volatile.find((v) => pathWithin(path, v.path));
    if (!field) return { only: false };
    fields.add(field);
  }
  return { only: true, fields: [...fields] };
}

/** "status.lastHeartbeatTime (promises[0]: a heartbeat every 3 s)" */
export function describeVolatile(fields: readonly VolatileField[]): string {
  return fields.map((f) => `${f.text} (${f.rule}: ${f.reason})`).join(", ");
}
