import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { InfrastructureError, UsageError } from "../../../../src/errors.js";
import type { KubeObject } from "../../../../src/kube/kube-client.js";
import {
  findOperatorDeployment,
  inApplyOrder,
  KUSTOMIZATION_FILES,
  operatorManifests,
  parseManifestText,
  renderManifests,
  withOperatorImage,
} from "../../../../src/operator/deployed/manifests.js";
import type { CommandResult, CommandRunner } from "../../../../src/process/command-runner.js";
import { refusingRunner } from "../../../support/command-context.js";

const FIXTURE = join(import.meta.dirname, "../../../fixtures/deployed-operator/config-default.yaml");

/** Records what would run; answers with a fixed result. */
function recordingRunner(result: Partial<CommandResult> = {}) {
  const calls: string[][] = [];
  const runner: CommandRunner = {
    run: (argv) => {
      calls.push([...argv]);
      return Promise.resolve({ exitCode: 0, stdout: "", stderr: "", ...result });
    },
  };
  return { runner, calls };
}

const noRunner = refusingRunner();

async function caught(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error;
  }
  throw new Error("expected an error");
}

function summary(objects: readonly KubeObject[]): string[] {
  return objects.map((o) => `${o.kind}/${o.metadata?.name}`);
}

function configMap(name: string): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "ns" } };
}

function deployment(name: string, containers: string[], namespace?: string): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, ...(namespace ? { namespace } : {}) },
    spec: {
      template: { spec: { containers: containers.map((c) => ({ name: c, image: `${c}:1` })) } },
    },
  };
}

let fixtureText: string;
let dir: string;

beforeAll(async () => {
  fixtureText = await readFile(FIXTURE, "utf8");
  dir = await mkdtemp(join(tmpdir(), "rc-manifests-"));
});

describe("renderManifests", () => {
  it("reads a YAML file relative to the contract and puts the objects in apply order", async () => {
    await writeFile(
      join(dir, "shuffled.yaml"),
      [
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: op, namespace: ops}\nspec: {}",
        "apiVersion: v1\nkind: Service\nmetadata: {name: metrics, namespace: ops}",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: rb, namespace: ops}",
        "",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: ops}",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: webapps.example.com}",
        "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa, namespace: ops}",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: ops}",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: cr}",
      ].join("\n---\n"),
    );
    const objects = await renderManifests(
      { manifests: ["shuffled.yaml"] },
      { runner: noRunner, contractDir: dir },
    );
    expect(summary(objects)).toEqual([
      "Namespace/ops",
      "CustomResourceDefinition/webapps.example.com",
      "ServiceAccount/sa",
      "ClusterRole/cr",
      "RoleBinding/rb",
      "ConfigMap/cm",
      "Deployment/op",
      "Service/metrics",
    ]);
  });

  it("reads the kubebuilder-like fixture in kustomize's order unchanged", async () => {
    const objects = await renderManifests(
      { manifests: [FIXTURE] },
      { runner: noRunner, contractDir: "/elsewhere" },
    );
    expect(summary(objects)).toEqual([
      "Namespace/webapp-system",
      "ServiceAccount/webapp-controller-manager",
      "ClusterRole/webapp-manager-role",
      "ClusterRoleBinding/webapp-manager-rolebinding",
      "Deployment/webapp-controller-manager",
    ]);
  });

  it.each(KUSTOMIZATION_FILES)("renders a directory with %s through kubectl kustomize", async (file) => {
    const kustomization = join(dir, `kustomize-${file}`);
    await mkdir(kustomization, { recursive: true });
    await writeFile(join(kustomization, file), "resources: []\n");
    // A YAML file beside the kustomization is kustomize's business, not read directly.
    await writeFile(
      join(kustomization, "extra.yaml"),
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: no}\n",
    );
    const { runner, calls } = recordingRunner({ stdout: fixtureText });
    const objects = await renderManifests(
      { manifests: [`kustomize-${file}`] },
      { runner, contractDir: dir, kubectl: "/bins/kubectl" },
    );
    expect(calls).toEqual([["/bins/kubectl", "kustomize", kustomization]]);
    expect(summary(objects)).toContain("Deployment/webapp-controller-manager");
    expect(summary(objects)).not.toContain("ConfigMap/no");
  });

  it("reads a plain directory's YAML files in name order, and a list of paths in order", async () => {
    const plain = join(dir, "plain");
    await mkdir(plain, { recursive: true });
    await writeFile(join(plain, "b.yml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n");
    await writeFile(join(plain, "a.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n");
    await writeFile(join(plain, "c.json"), '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}');
    await writeFile(join(plain, "README.md"), "not a manifest");
    await writeFile(join(dir, "z.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: z}\n");
    const objects = await renderManifests(
      { manifests: ["z.yaml", "plain"] },
      { runner: noRunner, contractDir: dir },
    );
    expect(summary(objects)).toEqual(["ConfigMap/z", "ConfigMap/a", "ConfigMap/b", "ConfigMap/c"]);
  });

  it("names the field and the path when something cannot be read", async () => {
    const missing = await caught(
      renderManifests({ manifests: ["z.yaml", "nope"] }, { runner: noRunner, contractDir: dir }),
    );
    expect(missing).toBeInstanceOf(UsageError);
    expect(missing.message).toBe(
      `operator.deploy.manifests[1]: cannot read ${join(dir, "nope")}: no such file or directory (ENOENT)`,
    );

    await mkdir(join(dir, "empty"), { recursive: true });
    const empty = await caught(
      renderManifests({ manifests: ["empty"] }, { runner: noRunner, contractDir: dir }),
    );
    expect(empty.message).toBe(
      `operator.deploy.manifests[0]: ${join(dir, "empty")} holds neither a kustomization (kustomization.yaml, kustomization.yml, Kustomization) nor YAML files`,
    );
  });

  it("reports kustomize's own error as the user's, and a missing kubectl as the environment's", async () => {
    const kustomization = join(dir, "broken");
    await mkdir(kustomization, { recursive: true });
    await writeFile(join(kustomization, "kustomization.yaml"), "resources: [missing.yaml]\n");
    const failing = recordingRunner({
      exitCode: 1,
      stderr: "error: accumulating resources: accumulation err='accumulating resources from 'missing.yaml'\n",
    });
    const userError = await caught(
      renderManifests(
        { manifests: ["broken"] },
        { runner: failing.runner, contractDir: dir, kubectl: "kubectl" },
      ),
    );
    expect(userError).toBeInstanceOf(UsageError);
    expect(userError.message).toContain(
      `operator.deploy.manifests[0]: kubectl kustomize ${kustomization} failed (exit 1)`,
    );
    expect(userError.message).toContain("accumulating resources from 'missing.yaml'");

    const absent = recordingRunner({
      exitCode: 127,
      stderr: "bash: /bins/kubectl: No such file or directory",
    });
    const environment = await caught(
      renderManifests(
        { manifests: ["broken"] },
        { runner: absent.runner, contractDir: dir, kubectl: "/bins/kubectl" },
      ),
    );
    expect(environment).toBeInstanceOf(InfrastructureError);
    expect(environment.message).toContain("cannot run /bins/kubectl");
  });
});

describe("parseManifestText", () => {
  it("expands a v1 List and skips empty documents", () => {
    const text =
      "---\n# nothing\n---\napiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: one}\n  - apiVersion: v1\n    kind: Secret\n    metadata: {name: two}\n";
    expect(summary(parseManifestText(text, "here"))).toEqual(["ConfigMap/one", "Secret/two"]);
  });

  it("refuses broken YAML and documents that are not objects, naming where", () => {
    expect(() => parseManifestText("a: [", "m.yaml")).toThrow(/^m\.yaml: not valid YAML: /);
    expect(() =>
      parseManifestText("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n- 1\n", "m.yaml"),
    ).toThrow("m.yaml: document 2 is not a Kubernetes object (expected apiVersion, kind and metadata.name)");
    expect(() => parseManifestText("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", "m.yaml")).toThrow(
      /document 1 is not a Kubernetes object/,
    );
  });
});

describe("inApplyOrder", () => {
  it("is stable within a tier", () => {
    const ordered = inApplyOrder([configMap("b"), deployment("d", ["x"]), configMap("a")]);
    expect(summary(ordered)).toEqual(["ConfigMap/b", "ConfigMap/a", "Deployment/d"]);
  });
});

describe("findOperatorDeployment", () => {
  it("takes the only Deployment and the container kubebuilder names manager", () => {
    const objects = parseManifestText(fixtureText, "fixture");
    const target = findOperatorDeployment(objects, {});
    expect(target.name).toBe("webapp-controller-manager");
    expect(target.namespace).toBe("webapp-system");
    expect(target.container).toBe("manager");
    expect(target.deployment).toBe(objects[4]);
  });

  it("takes the only container whatever its name", () => {
    expect(findOperatorDeployment([deployment("op", ["operator"], "ops")], {}).container).toBe("operator");
  });

  it("puts a Deployment without a namespace in default", () => {
    expect(findOperatorDeployment([deployment("op", ["operator"])], {}).namespace).toBe("default");
  });

  it("finds the one named, and refuses one that is not there with the list", () => {
    const objects = [deployment("web", ["web"], "app"), deployment("op", ["manager", "sidecar"], "ops")];
    expect(findOperatorDeployment(objects, { deployment: { name: "op", namespace: "ops" } }).name).toBe("op");
    expect(() => findOperatorDeployment(objects, { deployment: { name: "op", namespace: "app" } })).toThrow(
      "operator.deploy.deployment: the manifests hold no Deployment app/op (Deployments: app/web, ops/op)",
    );
  });

  it("asks which Deployment when there are several, and says when there is none", () => {
    const objects = [deployment("web", ["web"], "app"), deployment("op", ["manager"], "ops")];
    expect(() => findOperatorDeployment(objects, {})).toThrow(
      "operator.deploy.deployment: the manifests hold 2 Deployments (app/web, ops/op); name the operator's, e.g. deployment: { name: web, namespace: app }",
    );
    expect(() => findOperatorDeployment([configMap("a")], {})).toThrow(
      "operator.deploy.manifests: the manifests hold no Deployment (apps/v1); the operator must run as one",
    );
  });

  it("asks which container when none is the only one or manager, and refuses an unknown one", () => {
    const objects = [deployment("op", ["controller", "proxy"], "ops")];
    expect(() => findOperatorDeployment(objects, {})).toThrow(
      'operator.deploy.container: Deployment ops/op has 2 containers (controller, proxy) and none is named "manager"; name the operator\'s, e.g. container: controller',
    );
    expect(findOperatorDeployment(objects, { container: "proxy" }).container).toBe("proxy");
    expect(() => findOperatorDeployment(objects, { container: "manager" })).toThrow(
      'operator.deploy.container: Deployment ops/op has no container "manager" (containers: controller, proxy)',
    );
  });

  it("refuses a Deployment with no containers", () => {
    const empty: KubeObject = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "op", namespace: "ops" },
    };
    expect(() => findOperatorDeployment([empty], {})).toThrow(
      "operator.deploy.manifests: Deployment ops/op has no containers in spec.template.spec.containers",
    );
  });
});

describe("the operator's image", () => {
  it("is set on the operator container only, never pulled, in a copy", () => {
    const original = deployment("op", ["manager", "kube-rbac-proxy"], "ops");
    const before = structuredClone(original);
    const updated = withOperatorImage(original, "manager", "example.com/op:ci");
    expect(original).toEqual(before);
    expect(updated.spec).toEqual({
      template: {
        spec: {
          containers: [
            { name: "manager", image: "example.com/op:ci", imagePullPolicy: "IfNotPresent" },
            { name: "kube-rbac-proxy", image: "kube-rbac-proxy:1" },
          ],
        },
      },
    });
  });

  it("replaces the rendered Deployment in the list it returns", async () => {
    const { objects, target } = await operatorManifests(
      { manifests: [FIXTURE], image: "example.com/webapp:ci" },
      { runner: noRunner, contractDir: dir },
    );
    expect(objects[4]).toBe(target.deployment);
    const containers = (
      target.deployment.spec as { template: { spec: { containers: Record<string, unknown>[] } } }
    ).template.spec.containers;
    expect(containers.map((c) => [c.name, c.image, c.imagePullPolicy])).toEqual([
      ["kube-rbac-proxy", "gcr.io/kubebuilder/kube-rbac-proxy:v0.15.0", undefined],
      ["manager", "example.com/webapp:ci", "IfNotPresent"],
    ]);
  });
});
