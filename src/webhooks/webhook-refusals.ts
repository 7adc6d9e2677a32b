import { apiStatusOf } from "../kube/api-errors.js";

/**
 * The API server's answer when an admission webhook stopped a write, in
 * words that say whose it was. A kit write (the sample, an update) the
 * operator's own webhook denies is the contract's problem, not the
 * operator's failure: the sample must pass the webhooks as a user's would.
 * Undefined for any other error.
 */
export function webhookRefusal(error: unknown): string | undefined {
  const message = apiStatusOf(error)?.message ?? (error instanceof Error ? error.message : "");
  const denied = /admission webhook "([^"]+)" denied the request:?\s*(.*)/s.exec(message);
  if (denied) return `the admission webhook ${denied[1]} denied it: ${denied[2] || "no reason given"}`;
  const uncalled = /failed calling webhook "([^"]+)":?\s*(.*)/s.exec(message);
  if (uncalled)
    return `the API server could not call the webhook ${uncalled[1]}: ${uncalled[2] || "no reason given"}`;
  return undefined;
}

/**
 * The webhook that cannot take a dry run, when that is why the API server
 * refused one: a webhook whose sideEffects are Unknown or Some is never
 * called with dryRun, and the server refuses the request instead. That
 * says nothing of the write itself. Undefined for any other error.
 */
export function dryRunUnsupported(error: unknown): string | undefined {
  const message = apiStatusOf(error)?.message ?? (error instanceof Error ? error.message : "");
  return /admission webhook "([^"]+)" does not support dry run/.exec(message)?.[1];
}
