/**
 * Values that must never show in a log: the proxy's per-run tokens, the
 * credentials of the cluster's kubeconfig. Process-wide, as they are found;
 * the core only registers them, and the Action masks each one in the job
 * log (core.setSecret) through `onSecret`, so the core never imports it.
 */
const secrets = new Set<string>();
const listeners = new Set<(secret: string) => void>();

/** Registers a secret; a PEM block or base64 of one also registers its lines, which is how logs would show it. */
export function registerSecret(value: string | undefined): void {
  if (!value || value.length < 8) return;
  const parts = [value];
  const decoded = /^[A-Za-z0-9+/=\s]+$/.test(value) ? Buffer.from(value, "base64").toString("utf8") : value;
  if (decoded.includes("-----BEGIN")) {
    parts.push(...decoded.split("\n").filter((line) => line.length >= 16 && !line.startsWith("-----")));
  }
  for (const part of parts) {
    if (secrets.has(part)) continue;
    secrets.add(part);
    for (const listener of listeners) listener(part);
  }
}

/** Calls `listener` for every secret registered so far and from now on; returns how to stop. */
export function onSecret(listener: (secret: string) => void): () => void {
  for (const secret of secrets) listener(secret);
  listeners.add(listener);
  return () => listeners.delete(listener);
}
