import { createHmac, randomBytes } from "node:crypto";
import { isRecord } from "../util/records.js";

/**
 * Secret values never reach the write log or any artifact. Each value is
 * replaced by a short keyed hash of itself, so a change is still visible as
 * a different hash and an unchanged value as the same one, while the key
 * (random per process, never written anywhere) keeps anyone from confirming
 * a guessed value against the log.
 */
const KEY = randomBytes(32);

/** kubectl's client-side apply keeps the whole last applied object, values included, here. */
const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

export function redactSecretBody(
  target: { readonly group: string; readonly resource: string },
  body: unknown,
): unknown {
  if (target.group !== "" || target.resource !== "secrets") return body;
  if (Array.isArray(body)) return body.map(redactJsonPatchOperation);
  if (!isRecord(body)) return body;
  return {
    ...body,
    ...(isRecord(body.metadata) ? { metadata: redactMetadata(body.metadata) } : {}),
    ...(isRecord(body.data) ? { data: hashValues(body.data) } : {}),
    ...(isRecord(body.stringData) ? { stringData: hashValues(body.stringData) } : {}),
  };
}

/** `hmac:` and the first 12 hex digits of the value's keyed hash. */
export function secretHash(value: unknown): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
  return `hmac:${createHmac("sha256", KEY).update(text).digest("hex").slice(0, 12)}`;
}

function redactMetadata(metadata: Record<string, unknown>): Record<string, unknown> {
  const annotations = metadata.annotations;
  if (!isRecord(annotations) || !(LAST_APPLIED in annotations)) return metadata;
  return {
    ...metadata,
    annotations: { ...annotations, [LAST_APPLIED]: secretHash(annotations[LAST_APPLIED]) },
  };
}

function hashValues(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(values).map(([key, value]) => [key, value === null ? null : secretHash(value)]),
  );
}

function redactJsonPatchOperation(operation: unknown): unknown {
  if (!isRecord(operation) || !("value" in operation)) return operation;
  const path = typeof operation.path === "string" ? operation.path : "";
  const secrets = { group: "", resource: "secrets" };
  if (path === "") return { ...operation, value: redactSecretBody(secrets, operation.value) };
  if (path === "/data" || path === "/stringData") {
    const value = operation.value;
    return { ...operation, value: isRecord(value) ? hashValues(value) : secretHash(value) };
  }
  if (path === "/metadata" && isRecord(operation.value)) {
    return { ...operation, value: redactMetadata(operation.value) };
  }
  if (path === "/metadata/annotations" && isRecord(operation.value)) {
    return { ...operation, value: redactMetadata({ annotations: operation.value }).annotations };
  }
  if (
    path.startsWith("/data/") ||
    path.startsWith("/stringData/") ||
    path === `/metadata/annotations/${LAST_APPLIED.replace("/", "~1")}`
  ) {
    return { ...operation, value: secretHash(operation.value) };
  }
  return operation;
}
