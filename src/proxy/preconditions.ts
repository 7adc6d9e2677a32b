import { parse as parseYaml } from "yaml";
import type { PatchType } from "../kube/patch-types.js";
import { isKubernetesProtobuf, protobufMetadata, protobufWithResourceVersion } from "./protobuf-metadata.js";
import type { Verb } from "./request-classifier.js";

/**
 * Preconditions: the resourceVersion a write names as the state it was
 * based on. The API server answers 409 when the object moved on.
 *
 * The proxy reads what the operator's write carries, and for a write that
 * carries none it adds the resourceVersion of the state it has just read, so
 * that its read and the write are atomic: the write's effect is then judged
 * exactly, and another writer landing in between (a built-in controller, the
 * kit) turns into a 409 the proxy retries itself rather than a change blamed
 * on the operator. The operator's semantics are unchanged: its write had no
 * precondition and is applied to the current state either way.
 */

/** What the proxy knows of a write's body. */
export interface WriteBody {
  readonly verb: Verb;
  readonly patchType?: PatchType | "unknown";
  readonly body: Buffer;
  /** The body parsed as JSON (or YAML for apply), when it is. */
  readonly parsed?: unknown;
}

/** The precondition the request itself carries, if any. */
export function sentPrecondition(write: WriteBody): string | undefined {
  const { verb, parsed, body } = write;
  if (verb === "delete") return nested(parsed, "preconditions", "resourceVersion");
  if (verb !== "update" && verb !== "patch") return undefined;
  if (isKubernetesProtobuf(write.body)) return protobufMetadata(body)?.resourceVersion;
  if (write.patchType === "json" && Array.isArray(parsed)) {
    // A JSON patch that sets or tests /metadata/resourceVersion conditions the write on it.
    for (const op of parsed as unknown[]) {
      if (nested(op, "path") === "/metadata/resourceVersion") {
        const value = (op as { value?: unknown }).value;
        if (typeof value === "string" && value !== "") return value;
      }
    }
    return undefined;
  }
  return nested(parsed, "metadata", "resourceVersion");
}

/**
 * The body of an update or patch rewritten to carry `resourceVersion` as
 * its precondition, or undefined when this body cannot carry one safely
 * (CBOR, a body the proxy cannot parse, JSON whose numbers would not survive
 * a round trip through JavaScript).
 */
export function withPrecondition(write: WriteBody, resourceVersion: string): Buffer | undefined {
  const { verb, patchType, body } = write;
  if (verb === "update" && isKubernetesProtobuf(body))
    return protobufWithResourceVersion(body, resourceVersion);
  if (verb !== "update" && verb !== "patch") return undefined;
  if (patchType === "unknown") return undefined;
  const parsed = write.parsed;
  if (parsed === undefined || hasUnsafeNumbers(body)) return undefined;
  if (verb === "patch" && patchType === "json") {
    if (!Array.isArray(parsed)) return undefined;
    // Prepended, so an operation of the operator's own on the same path still wins.
    const check = { op: "replace", path: "/metadata/resourceVersion", value: resourceVersion };
    return Buffer.from(JSON.stringify([check, ...(parsed as unknown[])]));
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
  const object = parsed as Record<string, unknown>;
  const metadata = object.metadata;
  if (metadata !== undefined && (typeof metadata !== "object" || metadata === null)) return undefined;
  // JSON is YAML, so an apply body may be sent back as JSON under its YAML media type.
  return Buffer.from(JSON.stringify({ ...object, metadata: { ...metadata, resourceVersion } }));
}

/** The body as JSON, or for server-side apply as YAML; undefined for anything else. */
export function parseWriteBody(body: Buffer, contentType: string | undefined): unknown {
  const type = String(contentType ?? "").toLowerCase();
  if (body.length === 0 || isKubernetesProtobuf(body)) return undefined;
  const text = body.toString("utf8");
  if (type.includes("json")) return tryParse(() => JSON.parse(text) as unknown);
  if (type.includes("apply-patch+yaml")) {
    return tryParse(() => JSON.parse(text) as unknown) ?? tryParse(() => parseYaml(text) as unknown);
  }
  return undefined;
}

function tryParse(parse: () => unknown): unknown {
  try {
    return parse();
  } catch {
    return undefined;
  }
}

/**
 * True when the body holds a number JavaScript cannot represent exactly
 * (16 digits or more): re-serialising it would change the write. Digits
 * inside strings count too, which only makes the proxy more careful.
 */
function hasUnsafeNumbers(body: Buffer): boolean {
  return /\d{16,}/.test(body.toString("utf8"));
}

function nested(value: unknown, ...path: string[]): string | undefined {
  let current = value;
  for (const key of path) {
    if (typeof current !== "object" || current === null || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return typeof current === "string" && current !== "" ? current : undefined;
}
