/** Whether a parsed JSON value is an object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A parsed JSON value as an object: itself when it is one, else an empty object. */
export function asRecord(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

/** The value at a path of keys and list positions ("spec", "ports", 0, "port"), or undefined. */
export function valueAt(object: unknown, path: readonly (string | number)[]): unknown {
  let current = object;
  for (const part of path) {
    if (typeof part === "number") {
      if (!Array.isArray(current)) return undefined;
      current = current[part];
    } else {
      if (typeof current !== "object" || current === null || Array.isArray(current)) return undefined;
      current = (current as Record<string, unknown>)[part];
    }
  }
  return current;
}

/**
 * `target` with a JSON merge patch (RFC 7386) applied: objects merge key by
 * key, a null removes its key, anything else (lists included) replaces.
 * What the API server does with a merge patch, so the kit can build the
 * object a chain of merge patches leads to. Pure: neither input changes.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return structuredClone(patch);
  const merged: Record<string, unknown> = isRecord(target) ? structuredClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = applyMergePatch(merged[key], value);
  }
  return merged;
}
