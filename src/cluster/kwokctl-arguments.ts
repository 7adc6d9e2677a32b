import { join } from "node:path";
import { stringify as stringifyYaml } from "yaml";
import { KUBE_VERSION, type KwokClusterConfig } from "./cluster-config.js";

/**
 * What the kit hands kwokctl: its configuration file (bind address and
 * ports), its command lines and its environment. Pure; kwok-provider.ts
 * runs them.
 */

/** Every component binds this, and only this: etcd speaks plain HTTP without authentication. */
export const KWOK_BIND_ADDRESS = "127.0.0.1";

/**
 * Every port kwokctl's binary runtime uses, by its option name in
 * KwokctlConfiguration. Left 0, kwokctl picks a port itself by probing
 * downward from 32766 without any lock, long before the component binds it:
 * two creates at once can pick the same one. So the kit sets them all.
 */
export const KWOK_PORT_OPTIONS = [
  "etcdPort",
  "etcdPeerPort",
  "kubeApiserverPort",
  "kubeControllerManagerPort",
  "kubeSchedulerPort",
  "kwokControllerPort",
] as const;

export type KwokPortOption = (typeof KWOK_PORT_OPTIONS)[number];

/** A port for each of KWOK_PORT_OPTIONS. */
export type KwokPorts = { readonly [Option in KwokPortOption]: number };

/**
 * The KwokctlConfiguration the kit passes with `--config`: the bind address
 * and the ports of every component of the binary runtime. kwokctl has no
 * flag for either the bind address or the etcd peer port, so they are set
 * here, and the ports alongside them. The other ports (dashboard,
 * prometheus, jaeger, metrics-server, insecure apiserver) stay unset: those
 * components are not started.
 */
export function kwokctlConfiguration(ports: KwokPorts): Record<string, unknown> {
  return {
    apiVersion: "config.kwok.x-k8s.io/v1alpha1",
    kind: "KwokctlConfiguration",
    options: {
      bindAddress: KWOK_BIND_ADDRESS,
      ...Object.fromEntries(KWOK_PORT_OPTIONS.map((option) => [option, ports[option]])),
    },
  };
}

/** kwokctlConfiguration as the YAML file kwokctl reads. */
export function kwokctlConfigurationYaml(ports: KwokPorts): string {
  return stringifyYaml(kwokctlConfiguration(ports));
}

/**
 * Arguments of `kwokctl create cluster`: every binary local, no kubeconfig of
 * the user's touched, bind address and ports from `configPath` (a file from
 * kwokctlConfigurationYaml).
 */
export function kwokctlCreateArgs(config: KwokClusterConfig, configPath: string): string[] {
  const bin = (name: string) => join(config.binDir, name);
  return [
    "create",
    "cluster",
    // One token: kwokctl reads --config in a first pass over the command line,
    // before the subcommand's flags are known.
    `--config=${configPath}`,
    "--name",
    config.name,
    "--runtime",
    "binary",
    // An empty path keeps kwokctl from merging a context into ~/.kube/config.
    "--kubeconfig",
    "",
    "--kube-apiserver-binary",
    bin("kube-apiserver"),
    "--kube-controller-manager-binary",
    bin("kube-controller-manager"),
    "--kube-scheduler-binary",
    bin("kube-scheduler"),
    "--kwok-controller-binary",
    bin("kwok"),
    "--etcd-binary",
    bin("etcd"),
    "--wait",
    "60s",
  ];
}

/**
 * Arguments of `kwokctl scale node`: one simulated node. Its template's
 * defaults (110 pods, a /24 pod CIDR) run out in a long run or a test suite
 * that keeps its namespaces; a kwok node costs nothing per pod, so allow many.
 */
export function kwokctlScaleArgs(config: KwokClusterConfig): string[] {
  return [
    "scale",
    "node",
    "--replicas",
    "1",
    "--name",
    config.name,
    "--param",
    ".allocatable.pods=1000",
    "--param",
    '.podCIDRs=["10.0.0.0/16"]',
  ];
}

/**
 * kwokctl's environment variables that would override a port of the
 * configuration file. kwokctl ignores an empty one, so blanking them keeps a
 * value in the user's environment from undoing the kit's choice.
 */
export const KWOK_PORT_ENV = [
  "KWOK_ETCD_PORT",
  "KWOK_KUBE_APISERVER_PORT",
  "KWOK_KUBE_CONTROLLER_MANAGER_PORT",
  "KWOK_KUBE_SCHEDULER_PORT",
  "KWOK_CONTROLLER_PORT",
] as const;

/** Environment for kwokctl: our own work directory and the Kubernetes version the binaries are. */
export function kwokctlEnv(config: KwokClusterConfig): Record<string, string> {
  return {
    KWOK_WORKDIR: config.workDir,
    KWOK_KUBE_VERSION: KUBE_VERSION,
    KWOK_KUBECTL_BINARY: join(config.binDir, "kubectl"),
    ...Object.fromEntries(KWOK_PORT_ENV.map((name) => [name, ""])),
  };
}
