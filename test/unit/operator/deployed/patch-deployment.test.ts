import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { UsageError } from "../../../../src/errors.js";
import type { KubeObject } from "../../../../src/kube/kube-client.js";
import {
  findOperatorDeployment,
  parseManifestText,
  withOperatorImage,
} from "../../../../src/operator/deployed/manifests.js";
import {
  DEFAULT_KUBECONFIG_MOUNT_PATH,
  kubeconfigPathIn,
  kubeconfigSecret,
  patchOperatorDeployment,
  serviceAccountIdentity,
  withoutFlags,
  type OperatorDeploymentPatch,
} from "../../../../src/operator/deployed/patch-deployment.js";

const FIXTURE = join(import.meta.dirname, "../../../fixtures/deployed-operator/config-default.yaml");

let fixtureText: string;
let rendered: KubeObject;

beforeAll(async () => {
  fixtureText = await readFile(FIXTURE, "utf8");
  rendered = renderedDeployment();
});

/** The fixture's Deployment with the operator's image set, as deployed mode renders it: a fresh copy. */
function renderedDeployment(): KubeObject {
  const target = findOperatorDeployment(parseManifestText(fixtureText, "fixture"), {});
  return withOperatorImage(target.deployment, target.container, "example.com/webapp:ci");
}

const patch: OperatorDeploymentPatch = {
  container: "manager",
  secretName: "reconcile-conformance-kubeconfig",
  mountPath: DEFAULT_KUBECONFIG_MOUNT_PATH,
};

/** The fixture's kube-rbac-proxy container, which the patch must leave exactly as it was. */
const kubeRbacProxy = {
  args: [
    "--secure-listen-address=0.0.0.0:8443",
    "--upstream=http://127.0.0.1:8080/",
    "--logtostderr=true",
    "--v=0",
  ],
  image: "gcr.io/kubebuilder/kube-rbac-proxy:v0.15.0",
  name: "kube-rbac-proxy",
  ports: [{ containerPort: 8443, name: "https", protocol: "TCP" }],
  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
};

/** The fixture's manager container with the image set, before the patch. */
const manager = {
  args: ["--health-probe-bind-address=:8081", "--metrics-bind-address=127.0.0.1:8080", "--leader-elect"],
  command: ["/manager"],
  image: "example.com/webapp:ci",
  imagePullPolicy: "IfNotPresent",
  livenessProbe: { httpGet: { path: "/healthz", port: 8081 }, initialDelaySeconds: 15, periodSeconds: 20 },
  name: "manager",
  readinessProbe: { httpGet: { path: "/readyz", port: 8081 }, initialDelaySeconds: 5, periodSeconds: 10 },
  resources: { limits: { cpu: "500m", memory: "128Mi" }, requests: { cpu: "10m", memory: "64Mi" } },
  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
};

function podSpecOf(deployment: KubeObject): Record<string, unknown> {
  return (deployment.spec as { template: { spec: Record<string, unknown> } }).template.spec;
}

function operatorContainer(deployment: KubeObject, name = "manager"): Record<string, unknown> {
  const containers = podSpecOf(deployment).containers as Record<string, unknown>[];
  const found = containers.find((c) => c.name === name);
  if (!found) throw new Error(`no container ${name}`);
  return found;
}

describe("patchOperatorDeployment on a kubebuilder config/default rendering", () => {
  it("mounts the kubeconfig Secret, sets KUBECONFIG, pins one Pod at a time, keeps the rest", () => {
    const patched = patchOperatorDeployment(rendered, patch);
    expect(patched).toEqual({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {
        labels: { "app.kubernetes.io/name": "deployment", "control-plane": "controller-manager" },
        name: "webapp-controller-manager",
        namespace: "webapp-system",
      },
      spec: {
        replicas: 1,
        strategy: { type: "Recreate" },
        selector: { matchLabels: { "control-plane": "controller-manager" } },
        template: {
          metadata: {
            annotations: { "kubectl.kubernetes.io/default-container": "manager" },
            labels: { "control-plane": "controller-manager" },
          },
          spec: {
            containers: [
              kubeRbacProxy,
              {
                ...manager,
                // --leader-elect and the probe address stay: the Lease goes through the proxy, probes stay in the Pod.
                env: [{ name: "KUBECONFIG", value: "/var/run/reconcile-conformance/kubeconfig" }],
                volumeMounts: [
                  {
                    name: "reconcile-conformance-kubeconfig",
                    mountPath: "/var/run/reconcile-conformance",
                    readOnly: true,
                  },
                ],
              },
            ],
            securityContext: { runAsNonRoot: true },
            serviceAccountName: "webapp-controller-manager",
            terminationGracePeriodSeconds: 10,
            volumes: [
              {
                name: "reconcile-conformance-kubeconfig",
                secret: { secretName: "reconcile-conformance-kubeconfig" },
              },
            ],
          },
        },
      },
    });
  });

  it("is pure: the rendered Deployment is not changed", () => {
    const before = structuredClone(rendered);
    patchOperatorDeployment(rendered, patch);
    expect(rendered).toEqual(before);
  });

  it("is idempotent: patching the patched Deployment changes nothing", () => {
    const variants: OperatorDeploymentPatch[] = [
      patch,
      { ...patch, namespaced: { namespace: "scenario-1", arg: "--watch-namespace" } },
      {
        ...patch,
        namespaced: { namespace: "scenario-1", env: "WATCH_NAMESPACE" },
        env: { LOG_LEVEL: "debug" },
      },
    ];
    for (const variant of variants) {
      const once = patchOperatorDeployment(rendered, variant);
      expect(patchOperatorDeployment(once, variant)).toEqual(once);
    }
  });

  it("replaces what would bypass KUBECONFIG and keeps unrelated settings in place", () => {
    const edited = renderedDeployment();
    const container = operatorContainer(edited);
    container.command = ["/manager", "-kubeconfig", "/root/.kube/config", "--zap-devel"];
    container.args = [
      "--kubeconfig=/etc/kubeconfig",
      "--leader-elect",
      "--master",
      "https://10.0.0.1",
      "-v=2",
    ];
    container.env = [
      { name: "KUBECONFIG", value: "/etc/other" },
      { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
      { name: "KUBECONFIG", value: "/etc/later-duplicate" },
    ];
    container.volumeMounts = [
      { name: "certs", mountPath: "/tmp/k8s-webhook-server/serving-certs", readOnly: true },
      { name: "old", mountPath: DEFAULT_KUBECONFIG_MOUNT_PATH },
    ];
    const spec = edited.spec as { strategy?: unknown; replicas?: number };
    spec.replicas = 3;
    spec.strategy = { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } };
    podSpecOf(edited).volumes = [
      { name: "certs", secret: { secretName: "webhook-server-cert" } },
      { name: "reconcile-conformance-kubeconfig", secret: { secretName: "stale" } },
    ];
    const patched = patchOperatorDeployment(edited, patch);
    const operator = operatorContainer(patched);
    expect(operator.command).toEqual(["/manager", "--zap-devel"]);
    // A --kubeconfig it had now names the mounted kubeconfig (BuildConfigFromFlags reads no KUBECONFIG).
    expect(operator.args).toEqual([
      "--leader-elect",
      "-v=2",
      "--kubeconfig=/var/run/reconcile-conformance/kubeconfig",
    ]);
    expect(operator.env).toEqual([
      { name: "KUBECONFIG", value: "/var/run/reconcile-conformance/kubeconfig" },
      { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
    ]);
    expect(operator.volumeMounts).toEqual([
      { name: "certs", mountPath: "/tmp/k8s-webhook-server/serving-certs", readOnly: true },
      { name: "reconcile-conformance-kubeconfig", mountPath: DEFAULT_KUBECONFIG_MOUNT_PATH, readOnly: true },
    ]);
    expect(podSpecOf(patched).volumes).toEqual([
      { name: "certs", secret: { secretName: "webhook-server-cert" } },
      {
        name: "reconcile-conformance-kubeconfig",
        secret: { secretName: "reconcile-conformance-kubeconfig" },
      },
    ]);
    expect((patched.spec as Record<string, unknown>).replicas).toBe(1);
    expect((patched.spec as Record<string, unknown>).strategy).toEqual({ type: "Recreate" });
    expect(operatorContainer(patched, "kube-rbac-proxy")).toEqual(kubeRbacProxy);
  });

  it("confines the operator to a namespace by flag, replacing the flag it had", () => {
    const edited = renderedDeployment();
    operatorContainer(edited).args = ["--watch-namespace", "everything", "--leader-elect"];
    const patched = patchOperatorDeployment(edited, {
      ...patch,
      namespaced: { namespace: "scenario-1", arg: "--watch-namespace" },
    });
    expect(operatorContainer(patched).args).toEqual(["--leader-elect", "--watch-namespace=scenario-1"]);
  });

  it("confines the operator to a namespace by variable, and adds the contract's env", () => {
    const patched = patchOperatorDeployment(rendered, {
      ...patch,
      mountPath: "/etc/rc/",
      namespaced: { namespace: "scenario-1", env: "WATCH_NAMESPACE" },
      env: { LOG_LEVEL: "debug" },
    });
    const operator = operatorContainer(patched);
    expect(operator.env).toEqual([
      { name: "KUBECONFIG", value: "/etc/rc/kubeconfig" },
      { name: "LOG_LEVEL", value: "debug" },
      { name: "WATCH_NAMESPACE", value: "scenario-1" },
    ]);
    expect(operator.args).toEqual(manager.args);
    expect(operator.volumeMounts).toEqual([
      { name: "reconcile-conformance-kubeconfig", mountPath: "/etc/rc/", readOnly: true },
    ]);
  });

  it("refuses a container the Deployment does not have", () => {
    expect(() => patchOperatorDeployment(rendered, { ...patch, container: "operator" })).toThrow(UsageError);
    expect(() => patchOperatorDeployment(rendered, { ...patch, container: "operator" })).toThrow(
      'operator.deploy.container: Deployment webapp-system/webapp-controller-manager has no container "operator" (containers: kube-rbac-proxy, manager)',
    );
  });
});

describe("withoutFlags", () => {
  it("removes every form of a flag and its value, never the program", () => {
    expect(
      withoutFlags(
        [
          "--kubeconfig",
          "--kubeconfig=a",
          "-kubeconfig",
          "b",
          "--kubeconfig",
          "c",
          "--kubeconfigs=d",
          "--kubeconfig",
        ],
        ["kubeconfig"],
        1,
      ),
    ).toEqual(["--kubeconfig", "--kubeconfigs=d"]);
    expect(withoutFlags(["--kubeconfig", "--leader-elect"], ["kubeconfig"], 0)).toEqual(["--leader-elect"]);
  });
});

describe("kubeconfigSecret", () => {
  it("holds the kubeconfig under the key the Deployment mounts", () => {
    const kubeconfigYaml = "apiVersion: v1\nkind: Config\ncurrent-context: proxy\n";
    const secret = kubeconfigSecret({ name: "rc-kubeconfig", namespace: "webapp-system", kubeconfigYaml });
    expect(secret).toEqual({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "rc-kubeconfig",
        namespace: "webapp-system",
        labels: { "app.kubernetes.io/managed-by": "reconcile-conformance" },
      },
      type: "Opaque",
      data: { kubeconfig: Buffer.from(kubeconfigYaml).toString("base64") },
    });
    const data = secret.data as { kubeconfig: string };
    expect(parseYaml(Buffer.from(data.kubeconfig, "base64").toString("utf8"))).toEqual({
      apiVersion: "v1",
      kind: "Config",
      "current-context": "proxy",
    });
    expect(kubeconfigPathIn("/var/run/reconcile-conformance")).toBe(
      "/var/run/reconcile-conformance/kubeconfig",
    );
  });
});

describe("serviceAccountIdentity", () => {
  it("is the ServiceAccount the operator's Pods run as, for the proxy to impersonate", () => {
    expect(serviceAccountIdentity(rendered)).toEqual({
      user: "system:serviceaccount:webapp-system:webapp-controller-manager",
      groups: ["system:serviceaccounts", "system:serviceaccounts:webapp-system", "system:authenticated"],
    });
  });

  it("is the namespace's default ServiceAccount when the pod template names none", () => {
    const edited = renderedDeployment();
    delete podSpecOf(edited).serviceAccountName;
    expect(serviceAccountIdentity(edited).user).toBe("system:serviceaccount:webapp-system:default");
  });
});
