// The Action's post step (action.yml: runs.post -> dist/post.js, entry src/post.ts), run whatever became of the main
// step: passed, failed, cancelled, or killed before it could clean up. It runs the CLI's `clean`:
// everything whose owner is gone (the main step, by now) is removed: operator process groups,
// clusters. A cluster kept by keep-cluster was handed over by the main step and stays.
import * as core from "@actions/core";
import { Writable } from "node:stream";
import { main } from "../cli/main.js";
import { processEnvironment } from "../cluster/cluster-config.js";
import { abortOnSignals } from "../process/shutdown.js";
import { actionsCommandRunner } from "./actions-runner.js";
import { STATE } from "./state.js";

/** Lines a command writes, into the job log. */
function jobLog(): Writable {
  let pending = "";
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      pending += chunk.toString("utf8");
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) core.info(line);
      done();
    },
    final(done) {
      if (pending) core.info(pending);
      done();
    },
  });
}

/** The post step: `clean`, its output into the job log; a cleanup that could not finish only warns. */
export async function runPost(): Promise<void> {
  const shutdown = abortOnSignals();
  const owner = core.getState(STATE.ownerPid);
  core.info(
    `reconcile-conformance: removing what the main step${owner ? ` (pid ${owner})` : ""} left running`,
  );
  const code = await main(["clean"], {
    runner: actionsCommandRunner,
    environment: processEnvironment(),
    stdout: jobLog(),
    stderr: jobLog(),
    signal: shutdown.signal,
  });
  shutdown.dispose();
  const kept = core.getState(STATE.keptCluster);
  if (kept) {
    core.info(
      `reconcile-conformance: left the ${kept} for later steps (keep-cluster: the run did not pass); delete it with: ${core.getState(STATE.keptClusterDelete)}`,
    );
  }
  // A cleanup that could not finish is worth a warning, not a failed job: the verdict is the main step's.
  if (code !== 0)
    core.warning(`reconcile-conformance clean could not remove everything (exit ${code}); see above`);
}
