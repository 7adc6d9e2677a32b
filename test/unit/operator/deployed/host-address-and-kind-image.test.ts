import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { InfrastructureError } from "../../../../src/errors.js";
import {
  dockerNetworkConfigArgs,
  firstHostAddress,
  hostAddressFromNetworkConfig,
  kindHostAddress,
  kindNetworkName,
} from "../../../../src/operator/deployed/host-address.js";
import { kindLoadImageArgs, loadImageIntoKind } from "../../../../src/operator/deployed/kind-image.js";
import type { CommandResult, CommandRunner, RunOptions } from "../../../../src/process/command-runner.js";
import { pathWith } from "../../../support/executables.js";

/** Records what would run; answers with a fixed result. */
function recordingRunner(result: Partial<CommandResult> = {}) {
  const calls: { argv: string[]; options?: RunOptions }[] = [];
  const runner: CommandRunner = {
    run: (argv, options) => {
      calls.push({ argv: [...argv], ...(options ? { options } : {}) });
      return Promise.resolve({ exitCode: 0, stdout: "", stderr: "", ...result });
    },
  };
  return { runner, calls };
}

async function caught(promise: Promise<unknown>): Promise<InfrastructureError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof InfrastructureError) return error;
    throw error;
  }
  throw new Error("expected an InfrastructureError");
}

// What `docker network inspect kind --format '{{json .IPAM.Config}}'` prints.
const IPV4_ONLY = '[{"Subnet":"172.18.0.0/16","Gateway":"172.18.0.1"}]\n';
const DUAL_STACK =
  '[{"Subnet":"172.19.0.0/16","Gateway":"172.19.0.1"},{"Subnet":"fc00:f853:ccd:e793::/64","Gateway":"fc00:f853:ccd:e793::1"}]\n';
const IPV6_FIRST =
  '[{"Subnet":"fc00:f853:ccd:e793::/64","Gateway":"fc00:f853:ccd:e793::1"},{"Subnet":"172.20.0.0/16","Gateway":"172.20.0.1"}]\n';
const NO_GATEWAY =
  '[{"Subnet":"fc00:f853:ccd:e793::/64"},{"Subnet":"10.89.0.0/24","IPRange":"10.89.0.128/25"}]\n';
const IPV6_ONLY = '[{"Subnet":"fc00:f853:ccd:e793::/64","Gateway":"fc00:f853:ccd:e793::1"}]\n';

describe("hostAddressFromNetworkConfig", () => {
  it.each([
    ["IPv4 only", IPV4_ONLY, "172.18.0.1"],
    ["IPv4 and IPv6", DUAL_STACK, "172.19.0.1"],
    ["IPv6 first", IPV6_FIRST, "172.20.0.1"],
    ["no gateway: the subnet's first address", NO_GATEWAY, "10.89.0.1"],
  ])("%s", (_name, output, address) => {
    expect(hostAddressFromNetworkConfig(output)).toEqual({ address });
  });

  it.each([
    [
      "IPv6 only",
      IPV6_ONLY,
      "no IPv4 gateway or subnet (subnets: fc00:f853:ccd:e793::/64); kind's network must have IPv4",
    ],
    ["no IPAM configuration", "null\n", "the network has no IPAM configuration"],
    ["an empty list", "[]", "the network has no IPAM configuration"],
    ["not JSON", "Error: No such network: kind", "the output is not JSON"],
    ["not a list", '{"Subnet":"172.18.0.0/16"}', "the output is not a list of IPAM configurations"],
  ])("says why there is none: %s", (_name, output, reason) => {
    expect(hostAddressFromNetworkConfig(output)).toEqual({ reason });
  });

  it("derives the first host address of a subnet", () => {
    expect(firstHostAddress("172.18.0.0/16")).toBe("172.18.0.1");
    expect(firstHostAddress("192.168.49.77/24")).toBe("192.168.49.1");
    expect(firstHostAddress("10.255.255.252/30")).toBe("10.255.255.253");
    expect(firstHostAddress("0.0.0.0/0")).toBe("0.0.0.1");
    expect(firstHostAddress("10.0.0.0/31")).toBeUndefined();
    expect(firstHostAddress("fc00::/64")).toBeUndefined();
    expect(firstHostAddress("10.0.0.0")).toBeUndefined();
  });
});

describe("kindHostAddress", () => {
  let dockerPath: string;
  beforeAll(async () => {
    dockerPath = await pathWith("docker");
  });

  it("asks docker for kind's network and picks the IPv4 gateway", async () => {
    const { runner, calls } = recordingRunner({ stdout: DUAL_STACK });
    expect(await kindHostAddress({ runner, path: dockerPath })).toBe("172.19.0.1");
    expect(calls.map((c) => c.argv)).toEqual([
      [join(dockerPath, "docker"), "network", "inspect", "kind", "--format", "{{json .IPAM.Config}}"],
    ]);
  });

  it("names the command and its output when there is no address", async () => {
    const { runner } = recordingRunner({ stdout: IPV6_ONLY });
    const error = await caught(kindHostAddress({ runner, path: dockerPath, network: "kind-ci" }));
    expect(error.message).toBe(
      `docker network inspect kind-ci --format '{{json .IPAM.Config}}': no IPv4 gateway or subnet (subnets: fc00:f853:ccd:e793::/64); kind's network must have IPv4; output: ${IPV6_ONLY.trim()}`,
    );
  });

  it("names the command and docker's error when the network is missing", async () => {
    const { runner } = recordingRunner({
      exitCode: 1,
      stderr: "Error response from daemon: network kind not found\n",
    });
    const error = await caught(kindHostAddress({ runner, path: dockerPath }));
    expect(error.message).toBe(
      "docker network inspect kind --format '{{json .IPAM.Config}}' exited with 1: is the kind cluster created (its network exists once it is)?",
    );
    expect(error.details).toEqual(["Error response from daemon: network kind not found"]);
  });

  it("needs docker on PATH", async () => {
    const { runner, calls } = recordingRunner();
    const error = await caught(kindHostAddress({ runner, path: await pathWith() }));
    expect(error.code).toBe("deploy/docker-missing");
    expect(calls).toEqual([]);
  });

  it("follows kind's own variable for another network", () => {
    expect(kindNetworkName({})).toBe("kind");
    expect(kindNetworkName({ KIND_EXPERIMENTAL_DOCKER_NETWORK: "ci-net" })).toBe("ci-net");
    expect(dockerNetworkConfigArgs("ci-net")).toEqual([
      "network",
      "inspect",
      "ci-net",
      "--format",
      "{{json .IPAM.Config}}",
    ]);
  });
});

describe("loading the operator's image into kind", () => {
  let kindPath: string;
  beforeAll(async () => {
    kindPath = await pathWith("kind");
  });

  it("runs kind load docker-image for the cluster", async () => {
    expect(kindLoadImageArgs("example.com/webapp:ci", "rc-ci")).toEqual([
      "load",
      "docker-image",
      "example.com/webapp:ci",
      "--name",
      "rc-ci",
    ]);
    const { runner, calls } = recordingRunner();
    await loadImageIntoKind({ runner, image: "example.com/webapp:ci", cluster: "rc-ci", path: kindPath });
    expect(calls.map((c) => c.argv)).toEqual([
      [join(kindPath, "kind"), "load", "docker-image", "example.com/webapp:ci", "--name", "rc-ci"],
    ]);
  });

  it("says how to build an image that is not present locally", async () => {
    const { runner } = recordingRunner({
      exitCode: 1,
      stderr: 'ERROR: image: "example.com/webapp:ci" not present locally\n',
    });
    const error = await caught(
      loadImageIntoKind({ runner, image: "example.com/webapp:ci", cluster: "rc-ci", path: kindPath }),
    );
    expect(error.code).toBe("deploy/image-missing");
    expect(error.message).toBe(
      'image "example.com/webapp:ci" is not present locally, so it cannot be loaded into kind cluster "rc-ci": build it first (docker build -t example.com/webapp:ci .), or set operator.deploy.loadImage: false if the cluster can pull it',
    );
  });

  it("reports any other failure with kind's output, naming image and cluster", async () => {
    const { runner } = recordingRunner({
      exitCode: 1,
      stderr: 'ERROR: no nodes found for cluster "rc-ci"\n',
    });
    const error = await caught(
      loadImageIntoKind({ runner, image: "example.com/webapp:ci", cluster: "rc-ci", path: kindPath }),
    );
    expect(error.code).toBe("deploy/image-load-failed");
    expect(error.message).toBe("kind load docker-image example.com/webapp:ci --name rc-ci exited with 1");
    expect(error.details).toEqual(['ERROR: no nodes found for cluster "rc-ci"']);
  });

  it("needs kind on PATH", async () => {
    const { runner, calls } = recordingRunner();
    const error = await caught(
      loadImageIntoKind({ runner, image: "op:ci", cluster: "c", path: await pathWith() }),
    );
    expect(error.message).toBe(
      'cannot load image "op:ci" into kind cluster "c": the kind command is not on PATH',
    );
    expect(calls).toEqual([]);
  });
});
