import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { KIND_NODE_IMAGE_VARIABLE } from "../../src/cluster/cluster-config.js";

// What the kind tests need: a Docker engine, kind on PATH and a node image this machine holds.
// scripts/test.sh makes them ready (hack/kind/docker.sh, hack/kind/node-image.sh --print-env);
// a test run without them fails here, saying which is missing and how to get it.
const run = promisify(execFile);

export async function requireKind(): Promise<{ readonly nodeImage: string }> {
  const why = (what: string) =>
    new Error(
      `${what}: the kind tests need Docker, kind and a local node image; run \`eval "$(bash hack/kind/node-image.sh --print-env)"\` first (scripts/test.sh does)`,
    );
  await run("docker", ["info", "--format", "{{.ServerVersion}}"]).catch(() => {
    throw why("no Docker engine answers `docker info`");
  });
  await run("kind", ["version"]).catch(() => {
    throw why("kind is not on PATH");
  });
  const nodeImage = process.env[KIND_NODE_IMAGE_VARIABLE];
  if (!nodeImage) throw why(`${KIND_NODE_IMAGE_VARIABLE} is not set`);
  await run("docker", ["image", "inspect", nodeImage]).catch(() => {
    throw why(`the node image ${nodeImage} is not in Docker`);
  });
  return { nodeImage };
}

/** The names of the kind clusters Docker runs now. */
export async function kindClusters(): Promise<string[]> {
  const { stdout } = await run("kind", ["get", "clusters"]);
  return stdout
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("No kind clusters"));
}

/** Containers of a kind cluster, running or not (kind names them <cluster>-control-plane, ...). */
export async function kindContainers(cluster: string): Promise<string[]> {
  const { stdout } = await run("docker", [
    "ps",
    "--all",
    "--filter",
    `label=io.x-k8s.kind.cluster=${cluster}`,
    "--format",
    "{{.Names}}",
  ]);
  return stdout.split("\n").filter(Boolean);
}

/** Runs a command to its end, output collected; never rejects on a non-zero exit. */
export function runToEnd(
  argv: readonly string[],
  options: { readonly env?: NodeJS.ProcessEnv; readonly cwd?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const [command = "", ...args] = argv;
    const child = spawn(command, args, {
      env: options.env ?? process.env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
