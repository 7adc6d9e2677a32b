import { InfrastructureError } from "../../errors.js";
import { findExecutable, tailLines, type CommandRunner } from "../../process/command-runner.js";

/** Arguments of `kind load docker-image`: copies a local Docker image onto every node of the cluster. */
export function kindLoadImageArgs(image: string, cluster: string): string[] {
  return ["load", "docker-image", image, "--name", cluster];
}

export interface LoadImageOptions {
  readonly runner: CommandRunner;
  readonly image: string;
  /** The kind cluster's name. */
  readonly cluster: string;
  /** PATH to find kind on; the process's by default. */
  readonly path?: string;
  readonly signal?: AbortSignal;
  /** The contract's field that named the image, for the advice when it is missing; operator.deploy by default. */
  readonly setting?: "images";
  /** kind's progress lines, e.g. to a logger. */
  readonly onProgress?: (line: string) => void;
}

/**
 * Loads the operator's image (or an operand's) into the kind cluster, so its Pods start
 * without a registry (the Deployment says imagePullPolicy IfNotPresent).
 * The image must exist in the local Docker engine: the user's workflow
 * builds it before the kit runs.
 */
export async function loadImageIntoKind(options: LoadImageOptions): Promise<void> {
  const { image, cluster } = options;
  const kind = await findExecutable("kind", options.path);
  if (!kind) {
    throw new InfrastructureError(
      "deploy/kind-missing",
      `cannot load image "${image}" into kind cluster "${cluster}": the kind command is not on PATH`,
    );
  }
  const result = await options.runner.run([kind, ...kindLoadImageArgs(image, cluster)], {
    signal: options.signal,
    ...(options.onProgress ? { onStderrLine: options.onProgress } : {}),
  });
  if (result.exitCode === 0) return;
  const output = `${result.stderr}\n${result.stdout}`;
  if (/not present locally/i.test(output)) {
    throw new InfrastructureError(
      "deploy/image-missing",
      `image "${image}" is not present locally, so it cannot be loaded into kind cluster "${cluster}": ` +
        (options.setting === "images"
          ? `build or pull it before the kit runs (docker build -t ${image} ., or docker pull ${image}), or take it out of the contract's images if the cluster can pull it`
          : `build it first (docker build -t ${image} .), or set operator.deploy.loadImage: false if the cluster can pull it`),
      tailLines(output, 5),
    );
  }
  throw new InfrastructureError(
    "deploy/image-load-failed",
    `kind load docker-image ${image} --name ${cluster} exited with ${result.exitCode}`,
    tailLines(output, 10),
  );
}
