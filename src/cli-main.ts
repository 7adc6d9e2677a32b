// The CLI proper, loaded by src/cli.ts once it has seen that this Node can run it.
import { main } from "./cli/main.js";
import { processEnvironment } from "./cluster/cluster-config.js";
import { zxCommandRunner } from "./process/command-runner.js";
import { abortOnSignals } from "./process/shutdown.js";

const shutdown = abortOnSignals((signal) =>
  process.stderr.write(`\n${signal}: stopping and cleaning up (send it again to exit at once)\n`),
);
process.exitCode = await main(process.argv.slice(2), {
  runner: zxCommandRunner,
  environment: processEnvironment(),
  stdout: process.stdout,
  stderr: process.stderr,
  signal: shutdown.signal,
});
shutdown.dispose();
