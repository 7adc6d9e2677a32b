/**
 * Errors from the API server and typed questions about them. Conflict and
 * AlreadyExists share HTTP 409 and differ only in the Status `reason`.
 */

/** A non-2xx answer of the API server, with its Status reason and message. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    /** HTTP status code. */
    readonly code: number,
    /** Kubernetes Status reason: Conflict, AlreadyExists, NotFound, Invalid, ... */
    readonly reason: string | undefined,
    message: string,
    /** The response body as received. */
    readonly body: string | undefined,
  ) {
    super(message);
  }

  static fromResponse(method: string, path: string, code: number, body: string): ApiError {
    const status = parseStatus(body);
    const detail = status?.message ?? (body.trim().slice(0, 300) || "no body");
    return new ApiError(
      code,
      status?.reason,
      `${method} ${path}: ${code} ${status?.reason ?? ""}: ${detail}`.replace(" : ", ": "),
      body,
    );
  }
}

export interface ApiStatus {
  readonly code: number;
  readonly reason?: string;
  readonly message?: string;
}

/** The HTTP status and Status reason of an API error (ours or client-node's), or undefined for other errors. */
export function apiStatusOf(error: unknown): ApiStatus | undefined {
  if (error instanceof ApiError) return { code: error.code, reason: error.reason, message: error.message };
  if (typeof error !== "object" || error === null || !("code" in error) || typeof error.code !== "number") {
    return undefined;
  }
  const body = "body" in error ? parseStatus(error.body) : undefined;
  return { code: error.code, reason: body?.reason, message: body?.message };
}

function parseStatus(body: unknown): { reason?: string; message?: string } | undefined {
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
