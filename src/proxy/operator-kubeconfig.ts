import { readFile, writeFile } from "node:fs/promises";
import { parse, stringify } from "yaml";
import { isRecord } from "../util/records.js";

/**
 * A kubeconfig that points a client at the proxy with the run's bearer
 * token: the operator's (and, with the kit's token, the kit's own door).
 * Built as an object and serialised by the YAML library.
 */
export function proxyKubeconfig(options: {
  readonly server: string;
  /** PEM certificate the client must trust for the proxy (its self-signed one). */
  readonly certificateAuthority: string;
  readonly token: string;
  readonly user: string;
  readonly namespace?: string;
}): Record<string, unknown> {
  const name = "reconcile-conformance-proxy";
  return {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name,
        cluster: {
          server: options.server,
          "certificate-authority-data": Buffer.from(options.certificateAuthority).toString("base64"),
        },
      },
    ],
    users: [{ name: options.user, user: { token: options.token } }],
    contexts: [
      {
        name,
        context: {
          cluster: name,
          user: options.user,
          ...(options.namespace ? { namespace: options.namespace } : {}),
        },
      },
    ],
    "current-context": name,
  };
}

/** Writes it readable by its owner only: it holds a credential. */
export async function writeProxyKubeconfig(
  path: string,
  options: Parameters<typeof proxyKubeconfig>[0],
): Promise<string> {
  await writeFile(path, stringify(proxyKubeconfig(options)), { mode: 0o600 });
  return path;
}

/** What stands where a removed token was. */
export const REMOVED_TOKEN = "(removed when the operator stopped: it held only for the run)";

/**
 * Rewrites a proxy kubeconfig with its users' tokens removed, keeping the rest (the proxy's
 * address and certificate) as evidence. A file that is gone or not a kubeconfig is left as it is.
 */
export async function removeProxyToken(path: string): Promise<void> {
  const text = await readFile(path, "utf8").catch(() => undefined);
  if (text === undefined) return;
  const document: unknown = parse(text);
  if (!isRecord(document) || !Array.isArray(document.users)) return;
  for (const entry of document.users as unknown[]) {
    if (isRecord(entry) && isRecord(entry.user) && typeof entry.user.token === "string") {
      entry.user.token = REMOVED_TOKEN;
    }
  }
  await writeFile(path, stringify(document), { mode: 0o600 });
}
