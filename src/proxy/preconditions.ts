import { parse as parseYaml } from "yaml";
import type { PatchType } from "../kube/patch-types.js";
import { isKubernetesProtobuf, protobufMetadata, protobufWithResourceVersion } from "./protobuf-metadata.js";
import type { Verb } from "./request-classifier.js";
import { allowsUnconditionalUpdate } from "./unconditional-updates.js";

/**
 * Preconditions: the resourceVersion a write names as the state it was
 * based on. The API server answers 409 when the object moved on.
 *
 * The proxy reads what the operator's write carries, and for a write that
 * carries none it adds the resourceVersion of the state it has just read, so
 * that its read and the write are atomic: the write's effect is then judged
 * exactly, and another writer landing in between (a built-in controller, the
 * kit) turns into a 409 the proxy retries itself rather than a change blamed
 * on the operator. It does so only where the write's meaning is unchanged:
 * the write is applied to the current state either way, and the proxy never
 * adds one where the server would have refused the write without it, nor
 * re-encodes a body whose meaning a re-encoding could change.
 */

/** What the proxy knows of a write's body. */
export interface WriteBody {
  readonly verb: Verb;
  readonly group: string;
  readonly resource: string;
  readonly patchType?: PatchType | "unknown";
  readonly body: Buffer;
  /** The body parsed as JSON (or, for evidence only, as YAML). */
  readonly parsed?: unknown;
  /**
   * True when `parsed` came from JSON and re-serialising it gives the same
   * write (no number JavaScript would change); YAML is never re-encoded:
   * the API server reads it as YAML 1.1, where `010` is 8 and `yes` true.
   */
  readonly reencodable?: boolean;
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
 * its precondition, or undefined when it must go as it came: an update of a
 * resource that refuses unconditional updates (the server's 422 must
 * stand), CBOR, YAML, a body the proxy cannot parse, or JSON whose numbers
 * would not survive a round trip through JavaScript.
 */
export function withPrecondition(write: WriteBody, resourceVersion: string): Buffer | undefined {
  const { verb, patchType, body } = write;
  if (verb !== "update" && verb !== "patch") return undefined;
  if (verb === "update" && !allowsUnconditionalUpdate(write.group, write.resource)) return undefined;
  if (verb === "update" && isKubernetesProtobuf(body))
    return protobufWithResourceVersion(body, resourceVersion);
  if (patchType === "unknown" || !write.reencodable) return undefined;
  const parsed = write.parsed;
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
  // JSON is YAML, so an apply body that came as JSON may go back as JSON under its YAML media type.
  return Buffer.from(JSON.stringify({ ...object, metadata: { ...metadata, resourceVersion } }));
}

/**
 * The body as JSON, or for server-side apply sent as real YAML, as YAML (for
 * the write log only: see `reencodable`).
 */
export function parseWriteBody(
  body: Buffer,
  contentType: string | undefined,
): { parsed?: unknown; reencodable: boolean } {
  const type = String(contentType ?? "").toLowerCase();
  if (body.length === 0 || isKubernetesProtobuf(body)) return { reencodable: false };
  const text = body.toString("utf8");
  if (!type.includes("json") && !type.includes("apply-patch+yaml")) return { reencodable: false };
  const json = parseJsonExactly(text);
  if (json) return json;
  if (type.includes("apply-patch+yaml")) {
    try {
      return { parsed: parseYaml(text) as unknown, reencodable: false };
    } catch {
      return { reencodable: false };
    }
  }
  return { reencodable: false };
}

/**
 * JSON.parse, noting whether every number reads back as written: a number
 * JavaScript rounds (more than 15 significant digits), overflows (`1e400`)
 * or writes differently (`1.0`) makes the body not re-encodable.
 */
function parseJsonExactly(text: string): { parsed: unknown; reencodable: boolean } | undefined {
  let exact = true;
  try {
    const parsed = JSON.parse(text, (_key, value: unknown, context?: { source?: string }) => {
      if (typeof value === "number" && context?.source !== undefined && String(value) !== context.source) {
        exact = false;
      }
      return value;
    }) as unknown;
    // Without source access (an older runtime) numbers cannot be checked: be careful.
    return { parsed, reencodable: exact && SOURCE_ACCESS };
  } catch {
    return undefined;
  }
}

/** Whether this runtime hands JSON.parse revivers the source text of each value (Node 21 and later). */
const SOURCE_ACCESS = (() => {
  let seen = false;
  JSON.parse("1", (_key, value: unknown, context?: { source?: string }) => {
    seen = context?.source === "1";
    return value;
  });
  return seen;
})();

function nested(value: unknown, ...path: string[]): string | undefined {
  let current = value;
  for (const key of path) {
    if (typeof current !== "object" || current === null || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return typeof current === "string" && current !== "" ? current : undefined;
}
