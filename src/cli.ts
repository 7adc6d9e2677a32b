#!/usr/bin/env node
// The CLI's entry point: checks the Node it runs on before loading the CLI (cli-main.ts, a bundle of
// its own), so an older Node gets a sentence instead of a link error. It must stay free of imports
// other than node-requirement.ts.
import { nodeIsRecentEnough, nodeTooOldMessage } from "./node-requirement.js";

if (nodeIsRecentEnough(process.versions.node)) {
  await import("./cli-main.js");
} else {
  process.stderr.write(nodeTooOldMessage(process.versions.node, process.execPath));
  process.exitCode = 3; // ExitCode.infrastructure: the machine, not the contract or the operator
}
