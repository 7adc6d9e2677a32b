/**
 * Typed questions about errors from the API server. client-node throws
 * ApiException with the HTTP `code` and the Status body; Conflict and
 * AlreadyExists share 409 and differ only in the Status `reason`.
 */

export interface ApiStatus {
  readonly code: number;
  readonly reason?: string;
  readonly message?: string;
}

/** The HTTP status and Kubernetes Status reason of an API error, or undefined for other errors. */
export function apiStatusOf(error: unknown): ApiStatus | undefined {
  if (typeof error !== "object" || error === null || !("code" in error) || typeof error.code !== "number") {
    return undefined;
  }
  const body = "body" in error ? parseBody(error.body) : undefined;
  return { code: error.code, reason: body?.reason, message: body?.message };
}

function parseBody(body: unknown): { reason?: string; message?: string } | undefined {
  let value = body;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (typeof value !== "object" || value === null) return undefined;
  const reason = "reason" in value && typeof value.reason === "string" ? value.reason : undefined;
  const message = "message" in value && typeof value.message === "string" ? value.message : undefined;
  return { reason, message };
}

/** 409 from a failed resourceVersion precondition (a stale write). */
export function isConflict(error: unknown): boolean {
  const status = apiStatusOf(error);
  return status?.code === 409 && status.reason !== "AlreadyExists";
}

/** 409 AlreadyExists from a create of a name that is taken. */
export function isAlreadyExists(error: unknown): boolean {
  const status = apiStatusOf(error);
  return status?.code === 409 && status.reason === "AlreadyExists";
}

export function isNotFound(error: unknown): boolean {
  return apiStatusOf(error)?.code === 404;
}
