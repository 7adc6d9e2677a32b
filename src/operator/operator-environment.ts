/**
 * The environment the operator under test runs with: the user's, minus the
 * kit's own CI credentials, plus what the contract adds, with KUBECONFIG
 * always pointing at the proxy. An operator is code under test: it must not
 * be able to act with the workflow's token.
 */
export function operatorEnvironment(options: {
  readonly parent: Readonly<Record<string, string | undefined>>;
  /** Variables the contract adds (`operator.env`); they win over the parent's. */
  readonly extra?: Readonly<Record<string, string>>;
  /** Names of withheld variables the contract explicitly passes through (e.g. GITHUB_TOKEN). */
  readonly passThrough?: readonly string[];
  readonly kubeconfigPath: string;
}): Record<string, string> {
  const allowed = new Set(options.passThrough ?? []);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.parent)) {
    if (value === undefined) continue;
    if (isKitCredential(name) && !allowed.has(name)) continue;
    env[name] = value;
  }
  return { ...env, ...options.extra, KUBECONFIG: options.kubeconfigPath };
}

/** The Actions runtime's tokens and the action's inputs: the kit's, never the operator's. */
export function isKitCredential(name: string): boolean {
  return name.startsWith("ACTIONS_") || name.startsWith("INPUT_") || name === "GITHUB_TOKEN";
}
