// Run by child-registry.test.ts: starts a detached `sleep` the way the
// operator launcher starts an operator, prints its pid, then dies of an
// uncaught error. The registry's exit hook must take the sleep with it.
import { spawn } from "node:child_process";
import { trackProcessGroup } from "../../src/process/child-registry.js";

const child = spawn("sleep", ["600"], { detached: true, stdio: "ignore" });
if (child.pid === undefined) throw new Error("spawn failed");
trackProcessGroup(child.pid);
console.log(child.pid);
setTimeout(() => {
  throw new Error("uncaught, on purpose");
}, 50);
