// Loaded by `node --import=./check-node.mjs src/main.ts` before the operator.
//
// The operator is TypeScript that Node runs as it is, stripping the types, which
// Node does by default from 22.18 (and 23.6). An older Node would fail on the
// first .ts file with an obscure error; this says what is wrong instead.
// Plain JavaScript that any Node with --import (>= 18.18) can read.
//
// It also turns on Node's on-disk compile cache (in the system's temporary
// directory): @kubernetes/client-node is some 3,000 modules, and the kit starts
// the operator about fifty times a run; the cache takes a fifth off each start.
import module from "node:module";
import process from "node:process";

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
const stripsTypes = major > 23 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18);
if (!stripsTypes) {
  process.stderr.write(
    `webapp-operator-ts: Node ${process.versions.node} (${process.execPath}) cannot run it: it needs Node >= 22.18, ` +
      "which runs TypeScript files by stripping their types. Put a newer node first on PATH.\n",
  );
  // An operator's launcher, not library code: nothing else may run.
  // eslint-disable-next-line no-restricted-properties
  process.exit(1);
}
module.enableCompileCache?.();
