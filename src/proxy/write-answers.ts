import type { BufferedAnswer, OutgoingHeaders } from "../kube/api-server-connection.js";
import { protobufStatusReason, type ProtobufMetadata } from "./protobuf-metadata.js";

/**
 * Reading the API server's answer to a write: its headers, its JSON body,
 * the identity in its metadata, its Status reason. Pure; the write handler
 * decides what the answer means.
 */

type Metadata = ProtobufMetadata;

/** A 409 caused by a stale resourceVersion (not a server-side apply field conflict): JSON and protobuf alike. */
export function isStaleConflict(answer: BufferedAnswer): boolean {
  return answer.status === 409 && answer.body.includes("the object has been modified");
}

/** A header of an answer, by its lower-case name (several values joined). */
export function header(headers: OutgoingHeaders, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(", ") : String(value);
  }
  return undefined;
}

/** A JSON answer's body, parsed; undefined for protobuf, an empty body or invalid JSON. */
export function parseAnswer(answer: BufferedAnswer): unknown {
  const type = String(answer.headers["content-type"] ?? "");
  if (!type.includes("json") || answer.body.length === 0) return undefined;
  try {
    return JSON.parse(answer.body.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

/** The identity fields of a JSON object's metadata (what protobufMetadata reads from protobuf). */
export function jsonMetadata(value: unknown): Metadata {
  if (typeof value !== "object" || value === null || !("metadata" in value)) return {};
  const meta = value.metadata;
  if (typeof meta !== "object" || meta === null) return {};
  const field = (key: string) => (meta as Record<string, unknown>)[key];
  const text = (key: string) => {
    const v = field(key);
    return typeof v === "string" && v !== "" ? v : undefined;
  };
  const generation = field("generation");
  const owners = field("ownerReferences");
  const ownerUids = Array.isArray(owners)
    ? owners
        .map((o) => (o as { uid?: unknown }).uid)
        .filter((uid): uid is string => typeof uid === "string" && uid !== "")
    : [];
  const result: Record<string, unknown> = {
    name: text("name"),
    generateName: text("generateName"),
    uid: text("uid"),
    resourceVersion: text("resourceVersion"),
    generation: typeof generation === "number" ? generation : undefined,
    terminating: text("deletionTimestamp") ? true : undefined,
    ownerUids: ownerUids.length > 0 ? ownerUids : undefined,
  };
  return Object.fromEntries(Object.entries(result).filter(([, v]) => v !== undefined));
}

/** How many items a list answer (deletecollection) holds; undefined when it is not one. */
export function itemCount(value: unknown): number | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const items = (value as { items?: unknown }).items;
  return Array.isArray(items) ? items.length : undefined;
}

/** The Status reason of a failed answer, JSON or protobuf. */
export function statusReason(answer: BufferedAnswer): string | undefined {
  const parsed = parseAnswer(answer);
  if (
    typeof parsed === "object" &&
    parsed !== null &&
    "reason" in parsed &&
    typeof parsed.reason === "string"
  ) {
    return parsed.reason;
  }
  return protobufStatusReason(answer.body);
}

/** The Status reason a fault's made-up answer of `status` carries. */
export function reasonFor(status: number): string {
  if (status === 429) return "TooManyRequests";
  if (status === 409) return "Conflict";
  if (status === 504) return "Timeout";
  if (status >= 500) return "InternalError";
  return "BadRequest";
}
