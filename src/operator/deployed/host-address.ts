import { isIPv4 } from "node:net";
import { z } from "zod";
import { InfrastructureError } from "../../errors.js";
import { findExecutable, tailLines, type CommandRunner } from "../../process/command-runner.js";

/*
 * Where a deployed operator finds the kit's proxy. The proxy runs on the
 * host, the operator in a Pod on a kind node, which is a Docker container
 * on kind's own Docker network. The host's address on that network is the
 * network's gateway (the bridge interface Docker creates for it), and
 * Pods reach it through the node (kindnet masquerades traffic that leaves
 * the pod network), so it is the one address that works from every Pod.
 *
 * Why not host.docker.internal: Docker Engine on Linux (GitHub's runners)
 * defines that name only in containers started with
 * `--add-host=host.docker.internal:host-gateway`, which kind does not do
 * for its nodes; and even where a node had it in /etc/hosts, Pods resolve
 * names through CoreDNS, which does not read the node's /etc/hosts. It is
 * Docker Desktop's name (macOS, Windows), where the gateway below is an
 * address inside Docker's VM instead of the host's: deployed mode targets
 * Linux Docker.
 */

/** kind's network name; kind itself honours this variable to use another. */
export function kindNetworkName(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return env.KIND_EXPERIMENTAL_DOCKER_NETWORK || "kind";
}

/** Arguments of the docker command that prints a network's IPAM configuration as JSON. */
export function dockerNetworkConfigArgs(network: string): string[] {
  return ["network", "inspect", network, "--format", "{{json .IPAM.Config}}"];
}

const ipamConfig = z
  .array(z.looseObject({ Subnet: z.string().optional(), Gateway: z.string().optional() }))
  .nullable();

/** The host address, or why there is none. */
export type HostAddressResult = { readonly address: string } | { readonly reason: string };

/**
 * The IPv4 address the host has on a Docker network, from
 * `docker network inspect NET --format '{{json .IPAM.Config}}'`: the first
 * IPv4 gateway; failing that (Docker omits Gateway when the network was
 * created without one and it chose the default), the first host address of
 * the first IPv4 subnet, which is the one Docker gives the bridge. IPv6
 * entries are skipped: the proxy's kubeconfig names an IPv4 address.
 */
export function hostAddressFromNetworkConfig(json: string): HostAddressResult {
  let value: unknown;
  try {
    value = JSON.parse(json.trim());
  } catch {
    return { reason: "the output is not JSON" };
  }
  const parsed = ipamConfig.safeParse(value);
  if (!parsed.success) return { reason: "the output is not a list of IPAM configurations" };
  const entries = parsed.data ?? [];
  if (entries.length === 0) return { reason: "the network has no IPAM configuration" };
  const gateway = entries.find((e) => e.Gateway !== undefined && isIPv4(e.Gateway))?.Gateway;
  if (gateway !== undefined) return { address: gateway };
  const subnets = entries.map((e) => e.Subnet).filter((s): s is string => s !== undefined);
  for (const subnet of subnets) {
    const first = firstHostAddress(subnet);
    if (first !== undefined) return { address: first };
  }
  return {
    reason: `no IPv4 gateway or subnet (subnets: ${subnets.join(", ") || "none"}); kind's network must have IPv4`,
  };
}

/** The first host address of an IPv4 CIDR ("172.18.0.0/16" -> "172.18.0.1"); undefined for IPv6 or a /31, /32. */
export function firstHostAddress(cidr: string): string | undefined {
  const [ip, prefixText] = cidr.split("/");
  const prefix = Number(prefixText);
  if (ip === undefined || !isIPv4(ip) || !Number.isInteger(prefix) || prefix < 0 || prefix > 30) {
    return undefined;
  }
  const value = ip.split(".").reduce((sum, octet) => sum * 256 + Number(octet), 0);
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  const first = ((value & mask) >>> 0) + 1;
  return [24, 16, 8, 0].map((shift) => (first >>> shift) & 0xff).join(".");
}

export interface KindHostAddressOptions {
  readonly runner: CommandRunner;
  /** Docker network of the kind nodes; default kindNetworkName(). */
  readonly network?: string;
  /** PATH to find docker on; the process's by default. */
  readonly path?: string;
  readonly signal?: AbortSignal;
}

/**
 * The address the kind nodes (and their Pods) reach the host by, where the
 * proxy must listen for a deployed operator. Errors name the command and
 * what it printed.
 */
export async function kindHostAddress(options: KindHostAddressOptions): Promise<string> {
  const docker = await findExecutable("docker", options.path);
  if (!docker) {
    throw new InfrastructureError(
      "deploy/docker-missing",
      "deployed operator: the docker command is not on PATH; it is needed to find the address kind's nodes reach the host by",
    );
  }
  const args = dockerNetworkConfigArgs(options.network ?? kindNetworkName());
  const command = `docker ${args.map((a) => (/[\s{}]/.test(a) ? `'${a}'` : a)).join(" ")}`;
  const result = await options.runner.run([docker, ...args], { signal: options.signal, timeoutMs: 20_000 });
  if (result.exitCode !== 0) {
    throw new InfrastructureError(
      "deploy/host-address",
      `${command} exited with ${result.exitCode}: is the kind cluster created (its network exists once it is)?`,
      tailLines(result.stderr, 5),
    );
  }
  const found = hostAddressFromNetworkConfig(result.stdout);
  if ("address" in found) return found.address;
  throw new InfrastructureError(
    "deploy/host-address",
    `${command}: ${found.reason}; output: ${result.stdout.trim().slice(0, 300) || "(empty)"}`,
    tailLines(result.stderr, 5),
  );
}
