// Which Node the CLI needs, told before anything else is loaded. This module imports nothing: the
// entry point (cli.ts) runs it on whatever Node the user has, where the bundle itself would fail at
// link time with a stack trace (ERR_UNKNOWN_BUILTIN_MODULE for node:sqlite, which older Nodes lack).

/** The oldest Node the CLI runs on (package.json's engines). */
export const REQUIRED_NODE = "22.19.0";

/** Whether `version` ("20.20.2", "v24.1.0") is at least REQUIRED_NODE. Pure. */
export function nodeIsRecentEnough(version: string): boolean {
  const parts = (v: string) =>
    v
      .replace(/^v/, "")
      .split(".")
      .map((n) => Number.parseInt(n, 10) || 0);
  const [have, need] = [parts(version), parts(REQUIRED_NODE)];
  for (let i = 0; i < need.length; i++) {
    const a = have[i] ?? 0;
    const b = need[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

/** What the CLI prints on an older Node: which it needs, which it found, how to get one. Pure. */
export function nodeTooOldMessage(version: string, execPath: string): string {
  return [
    `reconcile-conformance needs Node.js ${REQUIRED_NODE} or later; this is Node.js ${version.replace(/^v/, "")} (${execPath}).`,
    "Install a current Node.js (24 is what the GitHub Action runs on), for example with nvm (`nvm install 24`)",
    "or your system's packages, or run the CLI on one fetched for the command alone:",
    "  npx -p node@24 -p reconcile-conformance reconcile-conformance <command>",
    "",
  ].join("\n");
}
