import { describe, expect, it } from "vitest";
import { parseClusterConfig, type ClusterSettings } from "../../../src/cluster/cluster-config.js";
import { UsageError } from "../../../src/errors.js";

const environment = { env: {}, homeDir: "/home/dev" };

describe("parseClusterConfig", () => {
  it.each<[string, ClusterSettings, Record<string, unknown>]>([
    [
      "defaults to kwok with the default name and cache paths",
      {},
      {
        provider: "kwok",
        name: "reconcile-conformance",
        binDir: "/home/dev/.cache/reconcile-conformance/kube/v1.35.4",
        workDir: "/home/dev/.cache/reconcile-conformance/kwok",
      },
    ],
    ["takes an explicit kwok bin dir", { binDir: "/opt/kube" }, { provider: "kwok", binDir: "/opt/kube" }],
    [
      "kind writes its kubeconfig into the cache, never ~/.kube/config",
      { provider: "kind", name: "ci" },
      {
        provider: "kind",
        name: "ci",
        kubeconfigPath: "/home/dev/.cache/reconcile-conformance/kind/ci.kubeconfig",
      },
    ],
    [
      "kind keeps a node image",
      { provider: "kind", nodeImage: "kindest/node:v1.35.4" },
      { nodeImage: "kindest/node:v1.35.4" },
    ],
    [
      "existing defaults to ~/.kube/config",
      { provider: "existing" },
      { provider: "existing", kubeconfigPath: "/home/dev/.kube/config" },
    ],
    [
      "existing takes kubeconfig and context",
      { provider: "existing", kubeconfig: "/tmp/k", context: "ctx" },
      { kubeconfigPath: "/tmp/k", context: "ctx" },
    ],
  ])("%s", (_, settings, expected) => {
    expect(parseClusterConfig(settings, environment)).toMatchObject(expected);
  });

  it("follows the cache and bin-dir environment variables", () => {
    const config = parseClusterConfig(
      {},
      {
        homeDir: "/home/dev",
        env: { RECONCILE_CONFORMANCE_CACHE: "/cache", RECONCILE_CONFORMANCE_KUBE_BIN_DIR: "/bins" },
      },
    );
    expect(config).toMatchObject({ binDir: "/bins", workDir: "/cache/kwok" });
  });

  it("takes kind's node image from RECONCILE_CONFORMANCE_KIND_NODE_IMAGE when none is given; a given one wins", () => {
    const env = { homeDir: "/home/dev", env: { RECONCILE_CONFORMANCE_KIND_NODE_IMAGE: "local/node:v1" } };
    expect(parseClusterConfig({ provider: "kind" }, env)).toMatchObject({ nodeImage: "local/node:v1" });
    expect(parseClusterConfig({ provider: "kind", nodeImage: "mine:v2" }, env)).toMatchObject({
      nodeImage: "mine:v2",
    });
    expect(parseClusterConfig({ provider: "kind" }, environment)).not.toHaveProperty("nodeImage");
    // Not a setting of the other providers: the variable does not make them refuse.
    expect(parseClusterConfig({ provider: "kwok" }, env)).not.toHaveProperty("nodeImage");
  });

  it("uses the first file of KUBECONFIG for existing", () => {
    const config = parseClusterConfig(
      { provider: "existing" },
      { homeDir: "/h", env: { KUBECONFIG: ":/a/config:/b/config" } },
    );
    expect(config).toMatchObject({ kubeconfigPath: "/a/config" });
  });

  it.each<[string, ClusterSettings, string]>([
    [
      "an unknown provider",
      { provider: "minikube" },
      '--provider "minikube" is not a provider: use one of kwok, kind, existing',
    ],
    ["an upper-case name", { name: "Dev" }, '--name "Dev" is not a valid cluster name'],
    ["a name with a trailing dash", { name: "dev-" }, '--name "dev-" is not a valid cluster name'],
    ["a name over 40 characters", { name: "a".repeat(41) }, "is not a valid cluster name"],
    ["a node image for kwok", { nodeImage: "x" }, '--node-image does not apply to provider "kwok"'],
    ["a context for kind", { provider: "kind", context: "c" }, '--context does not apply to provider "kind"'],
    [
      "a bin dir for existing",
      { provider: "existing", binDir: "/b" },
      '--bin-dir does not apply to provider "existing"',
    ],
  ])("rejects %s, naming the setting", (_, settings, message) => {
    const parse = () => parseClusterConfig(settings, environment);
    expect(parse).toThrow(UsageError);
    expect(parse).toThrow(message);
  });

  it("names settings with the caller's prefix (config files use field paths)", () => {
    expect(() => parseClusterConfig({ provider: "x" }, environment, { prefix: "cluster." })).toThrow(
      'cluster.provider "x" is not a provider',
    );
  });
});
