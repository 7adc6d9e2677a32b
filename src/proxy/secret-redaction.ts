import { createHash } from "node:crypto";

/**
 * Secret values never reach the write log or any artifact. Each value is
 * replaced by a short hash of itself, so a change is still visible as a
 * different hash and an unchanged value as the same one.
 */
export function redactSecretBody(
  target: { readonly group: string; readonly resource: string },
  body: unknown,
): unknown {
  if (target.group !== "" || target.resource !== "secrets") return body;
  if (Array.isArray(body)) return body.map(redactJsonPatchOperation);
  if (typeof body !== "object" || body === null) return body;
  const object = body as Record<string, unknown>;
  return {
    ...object,
    ...(isRecord(object.data) ? { data: hashValues(object.data) } : {}),
    ...(isRecord(object.stringData) ? { stringData: hashValues(object.stringData) } : {}),
  };
}

/** `sha256:` and the first 12 hex digits of the value's hash. */
export function secretHash(value: unknown): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
  return `sha256:${createHash("sha256").update(text).digest("hex").slice(0, 12)}`;
}

function hashValues(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(values).map(([key, value]) => [key, value === null ? null : secretHash(value)]),
  );
}

function redactJsonPatchOperation(operation: unknown): unknown {
  if (!isRecord(operation) || !("value" in operation)) return operation;
  const path = typeof operation.path === "string" ? operation.path : "";
  if (path === "/data" || path === "/stringData") {
    return {
      ...operation,
      value: isRecord(operation.value) ? hashValues(operation.value) : secretHash(operation.value),
    };
  }
  if (path.startsWith("/data/") || path.startsWith("/stringData/") || path === "") {
    return {
      ...operation,
      value:
        path === ""
          ? redactSecretBody({ group: "", resource: "secrets" }, operation.value)
          : secretHash(operation.value),
    };
  }
  return operation;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
