// Why an operator exited before it watched its custom resource, read from the end of its log: the
// last line that reports an error, and a hint for the causes new users meet most. Pure.

/** The longest log line a message quotes. */
const QUOTE_MAX = 300;

/** What the end of an operator's log says about its exit. */
export interface StartFailureCause {
  /** The last line that reports an error (else the last line), as written, cut to QUOTE_MAX. */
  readonly line?: string;
  /** What to do about it, when the line shows a cause the kit knows. */
  readonly hint?: string;
}

const ERROR_LINE =
  /\b(error|fatal|panic|failed|failure|cannot|unable to|no such file|not found|refused|denied)\b|"level":"(error|fatal|dpanic|panic)"|\bE\d{4} /i;

const HINTS: readonly { readonly pattern: RegExp; readonly hint: string }[] = [
  {
    // controller-runtime's webhook server: kubebuilder's default certificate directory.
    pattern: /k8s-webhook-server|serving-certs|tls\.(crt|key)/i,
    hint: 'its webhook server has no serving certificate: let the kit serve its webhooks (operator.webhooks: { manifests: [config/webhook/manifests.yaml] }; the kit writes the certificate where controller-runtime looks, or where certDir, certDirArg or certDirEnv says), or switch them off for the run (kubebuilder\'s layout: operator.env ENABLE_WEBHOOKS: "false")',
  },
  {
    // "environment variable", "env var", or a NAME_WITH_UNDERSCORES said to be unset.
    pattern:
      /\b(env(ironment)? var(iable)?s?)\b|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b[^a-z]*\b(must be set|is not set|not set|is required|is empty)\b/i,
    hint: "it needs an environment variable the run does not set: add it to operator.env in the contract (or name it in operator.passThroughEnv)",
  },
  {
    pattern: /address already in use|bind: /i,
    hint: "a port it binds is taken: with scenarios side by side every operator process needs its own ports; disable the metrics and health endpoints (kubebuilder: --metrics-bind-address=0 --health-probe-bind-address=0) or give each a free port",
  },
  {
    pattern: /no matches for kind|the server could not find the requested resource|no kind is registered/i,
    hint: "it asks for a kind the cluster does not serve: list every CRD it watches under crds in the contract",
  },
];

/** The cause of an early exit, from the last lines of the operator's log. */
export function startFailureCause(logLines: readonly string[]): StartFailureCause {
  const lines = logLines.map((l) => l.trimEnd()).filter((l) => l.trim() !== "");
  const line = [...lines].reverse().find((l) => ERROR_LINE.test(l)) ?? lines.at(-1);
  if (line === undefined) return {};
  const quoted = line.length > QUOTE_MAX ? `${line.slice(0, QUOTE_MAX - 1)}…` : line;
  const hint = HINTS.find((h) => lines.some((l) => ERROR_LINE.test(l) && h.pattern.test(l)))?.hint;
  return { line: quoted.trim(), ...(hint ? { hint } : {}) };
}

/** The message's tail for a cause: ": <line> (hint: ...)", or "" when the log is empty. */
export function describeStartFailure(cause: StartFailureCause): string {
  if (cause.line === undefined) return ": its log is empty";
  return `; its log ends with: ${cause.line}${cause.hint ? ` — ${cause.hint}` : ""}`;
}
