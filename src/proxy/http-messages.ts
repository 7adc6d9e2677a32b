import type http from "node:http";

// Headers that describe one connection, never forwarded (RFC 9110 section 7.6.1).
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
]);

/** A message's headers minus the hop-by-hop ones: what the proxy passes on, either way. */
export function filterHeaders(headers: http.IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(key.toLowerCase())) out[key] = value;
  }
  return out;
}

/** Answers with a Kubernetes Status (JSON), as the API server would. */
export function respondStatus(res: http.ServerResponse, code: number, reason: string, message: string): void {
  const body = JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
    code,
  });
  res.writeHead(code, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}
