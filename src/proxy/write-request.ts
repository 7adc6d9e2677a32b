import type { OutgoingHeaders } from "../kube/api-server-connection.js";
import { parseWriteBody, sentPrecondition, type WriteBody } from "./preconditions.js";
import { protobufMetadata, type ProtobufMetadata } from "./protobuf-metadata.js";
import { classifyRequest, type RequestInfo } from "./request-classifier.js";
import { redactSecretBody } from "./secret-redaction.js";
import { header, jsonMetadata } from "./write-answers.js";
import { tagOf, type Actor, type WriteEntry } from "./write-log.js";

/**
 * What one write is, read once from the request (its identity, body,
 * precondition, owners, field manager, dry run), and the write log entry it
 * becomes. Pure; the write handler decides what to do with it.
 */

/** One write as received: who sent it, what it addresses, its body. */
export interface IncomingWrite {
  readonly actor: Actor;
  /** The operator's run at arrival (operator writes only). */
  readonly run?: number;
  readonly method: string;
  readonly url: string;
  readonly headers: OutgoingHeaders;
  readonly body: Buffer;
  readonly time: string;
}

/** A write as the handler reads it. */
export interface ReadWrite {
  readonly write: IncomingWrite;
  readonly info: RequestInfo;
  readonly body: WriteBody;
  readonly parsed: unknown;
  readonly meta: ProtobufMetadata;
  readonly precondition?: string;
  readonly ownerUids?: readonly string[];
  readonly fieldManager?: string;
  readonly dryRun: boolean;
}

/** group/resource/namespace/name: the key owners are remembered by between writes. */
export function objectKey(info: Pick<RequestInfo, "group" | "resource" | "namespace" | "name">): string {
  return `${info.group}/${info.resource}/${info.namespace ?? ""}/${info.name ?? ""}`;
}

/** Reads what a write is; `knownOwners` gives the owners an earlier write of the object showed. */
export function readWrite(
  write: IncomingWrite,
  knownOwners: (key: string) => readonly string[] | undefined,
): ReadWrite {
  const contentType = header(write.headers, "content-type");
  const classified = classifyRequest(write.method, write.url, contentType);
  const { parsed, reencodable } = parseWriteBody(write.body, contentType);
  const meta = protobufMetadata(write.body) ?? jsonMetadata(parsed);
  // A create names its object in the body; the URL names it for every other verb.
  const info: RequestInfo =
    classified.name || !meta.name || classified.verb !== "create"
      ? classified
      : { ...classified, name: meta.name };
  const body: WriteBody = {
    verb: info.verb,
    group: info.group,
    resource: info.resource,
    patchType: info.patchType,
    body: write.body,
    parsed,
    reencodable,
  };
  const query = new URL(write.url, "http://write.invalid").searchParams;
  const ownerUids = meta.ownerUids ?? knownOwners(objectKey(info));
  const precondition = sentPrecondition(body);
  const fieldManager = query.get("fieldManager") ?? undefined;
  return {
    write,
    info,
    body,
    parsed,
    meta,
    ...(precondition === undefined ? {} : { precondition }),
    ...(ownerUids === undefined ? {} : { ownerUids }),
    ...(fieldManager === undefined ? {} : { fieldManager }),
    dryRun: query.getAll("dryRun").length > 0,
  };
}

/** The write log entry of a write: its identity and request, and what came of it. */
export function writeEntryOf(
  request: ReadWrite,
  seq: number,
  outcome: Partial<WriteEntry> & { code: number },
  decision: { effect: WriteEntry["effect"]; why?: string },
): WriteEntry {
  const { info, write, meta } = request;
  const { path: _path, ...identity } = info;
  const tag = tagOf(info, request.parsed);
  const body = request.parsed === undefined ? undefined : redactSecretBody(info, request.parsed);
  return {
    seq,
    time: write.time,
    actor: write.actor,
    ...(write.run !== undefined ? { run: write.run } : {}),
    ...identity,
    ...(meta.generateName && info.verb === "create" ? { generateName: meta.generateName } : {}),
    ...(request.fieldManager ? { fieldManager: request.fieldManager } : {}),
    ...(request.dryRun ? { dryRun: true as const } : {}),
    ...(request.precondition ? { sentResourceVersion: request.precondition } : {}),
    ...outcome,
    effect: decision.effect,
    ...(decision.why ? { effectWhy: decision.why } : {}),
    ...(tag ? { tag } : {}),
    ...(body === undefined ? {} : { body }),
  };
}
