import { KubeConfig } from "@kubernetes/client-node";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { InfrastructureError } from "../../src/errors.js";
import type { KubeObject } from "../../src/kube/kube-client.js";
import {
  defaultKubectl,
  inApplyOrder,
  operatorManifests,
  renderManifests,
  type OperatorTarget,
} from "../../src/operator/deployed/manifests.js";
import {
  DEFAULT_KUBECONFIG_MOUNT_PATH,
  kubeconfigSecret,
  patchOperatorDeployment,
} from "../../src/operator/deployed/patch-deployment.js";
import { OperatorPods, type OperatorPod } from "../../src/operator/deployed/pod-tracker.js";
import { zxCommandRunner, type CommandRunner } from "../../src/process/command-runner.js";
import { proxyKubeconfig } from "../../src/proxy/operator-kubeconfig.js";
import { pollUntil } from "../../src/util/poll.js";
import { startTestCluster, type TestCluster } from "../support/kwok-cluster.js";

// Deployed mode's building blocks against a real API server: the operator's
// manifests (a kubebuilder config/default rendering) applied with the
// Deployment patched to read the proxy's kubeconfig from a Secret, and the
// crash bookkeeping. kwok's simulated node marks the Pods Running; their
// containers never run, so nothing here needs Docker or the image.

const FIXTURE = join(import.meta.dirname, "../fixtures/deployed-operator/config-default.yaml");
const SECRET_NAME = "reconcile-conformance-kubeconfig";
const noRunner: CommandRunner = { run: () => Promise.reject(new Error("plain YAML needs no command")) };

/** What the kit would put in the Secret: the proxy as the kind node reaches the host. */
const KUBECONFIG_YAML = stringify(
  proxyKubeconfig({
    server: "https://172.18.0.1:41443",
    certificateAuthority: "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n",
    token: "operator-token-for-the-test",
    user: "operator",
  }),
);

let cluster: TestCluster;
let target: OperatorTarget;
let pods: OperatorPods;

const deploymentRef = () => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  name: target.name,
  namespace: target.namespace,
});

beforeAll(async () => {
  cluster = await startTestCluster("rc-deployed");
  const rendered = await operatorManifests(
    { manifests: [FIXTURE], image: "example.com/webapp:ci" },
    { runner: noRunner, contractDir: "/" },
  );
  target = rendered.target;
  const patched = patchOperatorDeployment(target.deployment, {
    container: target.container,
    secretName: SECRET_NAME,
    mountPath: DEFAULT_KUBECONFIG_MOUNT_PATH,
  });
  const secret = kubeconfigSecret({
    name: SECRET_NAME,
    namespace: target.namespace,
    kubeconfigYaml: KUBECONFIG_YAML,
  });
  const objects = inApplyOrder([
    ...rendered.objects.map((o) => (o === target.deployment ? patched : o)),
    secret,
  ]);
  for (const object of objects) await cluster.client.patch(object, { type: "apply", force: true });
  pods = new OperatorPods({
    kube: cluster.client,
    deployment: { name: target.name, namespace: target.namespace },
  });
});

afterAll(async () => {
  cluster?.client.close();
  await cluster?.provider.delete();
});

interface PodTemplate {
  spec: {
    replicas: number;
    strategy: unknown;
    template: {
      spec: {
        containers: { name: string; image: string; env?: unknown[]; volumeMounts?: unknown[] }[];
        volumes?: unknown[];
      };
    };
  };
}

describe("the patched operator Deployment in the cluster", () => {
  it("has the kubeconfig volume, the read-only mount and KUBECONFIG on the operator container only", async () => {
    const deployment = await cluster.client.get<KubeObject & PodTemplate>(deploymentRef());
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy).toEqual({ type: "Recreate" });
    const pod = deployment.spec.template.spec;
    expect(pod.volumes).toEqual([
      // The API server fills in the default mode.
      { name: "reconcile-conformance-kubeconfig", secret: { secretName: SECRET_NAME, defaultMode: 0o644 } },
    ]);
    const manager = pod.containers.find((c) => c.name === "manager");
    expect(manager?.image).toBe("example.com/webapp:ci");
    expect(manager?.env).toEqual([
      { name: "KUBECONFIG", value: "/var/run/reconcile-conformance/kubeconfig" },
    ]);
    expect(manager?.volumeMounts).toEqual([
      {
        name: "reconcile-conformance-kubeconfig",
        mountPath: "/var/run/reconcile-conformance",
        readOnly: true,
      },
    ]);
    const sidecar = pod.containers.find((c) => c.name === "kube-rbac-proxy");
    expect(sidecar?.env).toBeUndefined();
    expect(sidecar?.volumeMounts).toBeUndefined();
  });

  it("reads its kubeconfig from a Secret that holds the proxy's", async () => {
    const secret = await cluster.client.get({
      apiVersion: "v1",
      kind: "Secret",
      name: SECRET_NAME,
      namespace: target.namespace,
    });
    expect(secret.type).toBe("Opaque");
    const data = secret.data as Record<string, string>;
    expect(Object.keys(data)).toEqual(["kubeconfig"]);
    const text = Buffer.from(data.kubeconfig ?? "", "base64").toString("utf8");
    expect(text).toBe(KUBECONFIG_YAML);
    const config = new KubeConfig();
    config.loadFromString(text);
    expect(config.getCurrentCluster()?.server).toBe("https://172.18.0.1:41443");
    expect(config.getCurrentUser()?.token).toBe("operator-token-for-the-test");
  });
});

describe("OperatorPods", () => {
  let first: OperatorPod;
  let second: { name: string; uid: string };

  it("finds the Deployment's running Pod through its ReplicaSet, ignoring a look-alike", async () => {
    first = await pods.waitForRunningPod({ timeoutMs: 60_000 });
    // Same labels, no owner: the selector matches it, the owner chain does not.
    await cluster.client.create({
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "look-alike",
        namespace: target.namespace,
        labels: { "control-plane": "controller-manager" },
      },
      spec: { containers: [{ name: "manager", image: "example.com/webapp:ci" }] },
    });
    await pollUntil(
      async () => {
        const pod = await cluster.client.get({
          apiVersion: "v1",
          kind: "Pod",
          name: "look-alike",
          namespace: target.namespace,
        });
        const phase = (pod.status as { phase?: string } | undefined)?.phase;
        return phase === "Running"
          ? { done: true, value: undefined }
          : { done: false, reason: `phase ${phase}` };
      },
      { description: "the look-alike Pod to run", timeoutMs: 60_000 },
    );
    expect(await pods.currentPod()).toEqual(first);
    expect((await pods.pods()).map((p) => p.uid)).toEqual([first.uid]);
    expect(first.name).toMatch(/^webapp-controller-manager-[a-z0-9]+-[a-z0-9]+$/);
  });

  it("crash() deletes the Pod at once and returns the new one the ReplicaSet made", async () => {
    const crash = await pods.crash();
    expect(crash.oldPod).toEqual({ name: first.name, uid: first.uid });
    expect(crash.newPod.uid).not.toBe(first.uid);
    expect(crash.newPod.name).not.toBe(first.name);
    // Zero grace: the old Pod is gone from the API, not terminating.
    expect(
      await cluster.client.tryGet({
        apiVersion: "v1",
        kind: "Pod",
        name: first.name,
        namespace: target.namespace,
      }),
    ).toBeUndefined();
    const running = await pods.waitForRunningPod({ timeoutMs: 60_000, except: first.uid });
    expect(running.uid).toBe(crash.newPod.uid);
    second = crash.newPod;
  });

  it("crashes again: each crash replaces the Pod that is current", async () => {
    const crash = await pods.crash();
    expect(crash.oldPod).toEqual(second);
    expect(new Set([first.uid, second.uid, crash.newPod.uid]).size).toBe(3);
    await pods.waitForRunningPod({ timeoutMs: 60_000, except: second.uid });
  });

  it("refuses to crash an operator that has no running Pod", async () => {
    await cluster.client.patch(
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: target.name, namespace: target.namespace },
        spec: { replicas: 0 },
      },
      { type: "merge" },
    );
    await pollUntil(
      async () => {
        const left = await pods.pods();
        return left.length === 0
          ? { done: true, value: undefined }
          : { done: false, reason: `${left.length} Pods left` };
      },
      { description: "the operator's Pods to be gone", timeoutMs: 60_000 },
    );
    expect(await pods.currentPod()).toBeUndefined();
    const error = await pods.crash().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InfrastructureError);
    expect((error as InfrastructureError).message).toBe(
      "cannot crash the operator: Deployment webapp-system/webapp-controller-manager has no running Pod (no Pods)",
    );
  });

  it("says so when the Deployment does not exist", async () => {
    const missing = new OperatorPods({
      kube: cluster.client,
      deployment: { name: "nope", namespace: target.namespace },
    });
    await expect(missing.crash()).rejects.toThrow(
      "Deployment webapp-system/nope does not exist in the cluster",
    );
  });
});

describe("a kustomize directory", () => {
  it("renders with the real kubectl kustomize to the same objects as the plain YAML", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rc-kustomize-"));
    await writeFile(join(dir, "config-default.yaml"), await readFile(FIXTURE, "utf8"));
    await writeFile(join(dir, "kustomization.yaml"), "resources:\n  - config-default.yaml\n");
    const options = { runner: zxCommandRunner, contractDir: dir, kubectl: defaultKubectl() };
    const kustomized = await renderManifests({ manifests: ["."] }, options);
    const plain = await renderManifests({ manifests: ["config-default.yaml"] }, options);
    expect(kustomized).toEqual(plain);
    expect(kustomized.map((o) => o.kind)).toEqual([
      "Namespace",
      "ServiceAccount",
      "ClusterRole",
      "ClusterRoleBinding",
      "Deployment",
    ]);
  });
});
