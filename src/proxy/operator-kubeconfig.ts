import { writeFile } from "node:fs/promises";
import { stringify } from "yaml";

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
