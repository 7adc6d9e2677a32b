import type { Verb } from "./request-classifier.js";

/**
 * Which requests or log entries something is about. Every field that is set
 * must match; unset fields match anything. One matcher for the faults, the
 * write log, the read log and the proxy, so "the Service writes of this
 * namespace" means the same thing everywhere.
 */
export interface ObjectMatch {
  readonly verb?: Verb;
  readonly group?: string;
  /** Plural resource, e.g. "services". */
  readonly resource?: string;
  /** "" matches only the main resource; undefined matches any. */
  readonly subresource?: string;
  /** Matches the request's namespace; a cluster-wide request (no namespace) matches none. */
  readonly namespace?: string;
  readonly name?: string;
  /** Matches objects with an ownerReference to this UID. */
  readonly ownerUid?: string;
}

/** The identity of a request or an entry, as far as the matcher looks. */
export interface MatchableObject {
  readonly verb: Verb;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly ownerUids?: readonly string[];
}

export function matchesObject(match: ObjectMatch, target: MatchableObject): boolean {
  return (
    (match.verb === undefined || match.verb === target.verb) &&
    (match.group === undefined || match.group === target.group) &&
    (match.resource === undefined || match.resource === target.resource) &&
    (match.subresource === undefined || match.subresource === (target.subresource ?? "")) &&
    (match.namespace === undefined || match.namespace === target.namespace) &&
    (match.name === undefined || match.name === target.name) &&
    (match.ownerUid === undefined || (target.ownerUids ?? []).includes(match.ownerUid))
  );
}
