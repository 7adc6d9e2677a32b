// webapp-operator-ts: the WebApp controller written with @kubernetes/client-node
// (informers and a work queue of its own, no controller-runtime), run out of
// cluster against the API server of a kubeconfig (--kubeconfig, else
// $KUBECONFIG, else ~/.kube/config). Correct by default; --bug or WEBAPP_BUG
// names one seeded mistake (src/bugs.ts).
//
// Run by Node >= 22.18, which strips the types itself (see ../check-node.mjs):
//   node --import=./check-node.mjs src/main.ts --watch-namespace=demo
import { KubeConfig } from "@kubernetes/client-node";
import { parseArgs } from "node:util";
import { ALL_BUGS, parseBug } from "./bugs.ts";
import { consoleLog } from "./log.ts";
import { Operator } from "./operator.ts";

const usage = `usage: node src/main.ts [--watch-namespace=<namespace>] [--kubeconfig=<file>] [--bug=<name>]
  --watch-namespace  reconcile WebApps of this namespace only (default: every namespace)
  --kubeconfig       the kubeconfig (default: $KUBECONFIG, else ~/.kube/config)
  --bug              a seeded mistake (default: $WEBAPP_BUG; empty: the correct operator): ${ALL_BUGS.join(", ")}`;

async function main(): Promise<number> {
  let options;
  try {
    options = parseArgs({
      options: {
        "watch-namespace": { type: "string", default: "" },
        kubeconfig: { type: "string" },
        bug: { type: "string", default: process.env.WEBAPP_BUG ?? "" },
        help: { type: "boolean", default: false },
      },
      strict: true,
    }).values;
  } catch (error) {
    console.error(`webapp-operator-ts: ${error instanceof Error ? error.message : String(error)}\n${usage}`);
    return 2;
  }
  if (options.help) {
    console.log(usage);
    return 0;
  }
  let bug;
  try {
    bug = parseBug(options.bug);
  } catch (error) {
    console.error(`webapp-operator-ts: --bug: ${error instanceof Error ? error.message : String(error)}`);
    return 2;
  }

  const config = new KubeConfig();
  if (options.kubeconfig) config.loadFromFile(options.kubeconfig);
  else config.loadFromDefault();
  if (!config.getCurrentCluster()) {
    console.error("webapp-operator-ts: the kubeconfig names no current cluster");
    return 1;
  }

  const log = consoleLog;
  if (bug) log.info(`running with a seeded bug: ${bug}`);
  const operator = new Operator({ config, namespace: options["watch-namespace"], bug, log });
  const stop = (signal: string) => {
    log.info(`${signal}: finishing the reconcile under way, then exiting`);
    operator.stop();
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
  log.info(
    `starting: server ${config.getCurrentCluster()?.server ?? "?"}, namespace ${options["watch-namespace"] || "(all)"}`,
  );
  await operator.run();
  log.info("stopped");
  return 0;
}

process.exitCode = await main();
