import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "yaml";
import type { KubeClient, KubeObject } from "../../src/kube/kube-client.js";
import { pollUntil } from "../../src/util/poll.js";

/** Files and helpers for the bundled example operator (examples/webapp-operator). */
export const exampleDir = join(import.meta.dirname, "../../examples/webapp-operator");
export const WEBAPP_API_VERSION = "demo.reconcile-conformance.dev/v1alpha1";
export const WEBAPP_RESOURCE = { group: "demo.reconcile-conformance.dev", resource: "webapps" } as const;

/** The example operator's binary, built (or found current) by its build script. */
export function exampleOperatorBinary(): string {
  const output = execFileSync("bash", [join(exampleDir, "build.sh")], { encoding: "utf8" });
  return output.trim().split("\n").at(-1) ?? "";
}

export async function readExampleYaml<T = KubeObject>(relativePath: string): Promise<T> {
  return parse(await readFile(join(exampleDir, relativePath), "utf8")) as T;
}

/** Installs the WebApp CRD and waits until the API serves the kind. */
export async function installWebAppCrd(client: KubeClient): Promise<void> {
  await client.create(await readExampleYaml("crds/webapp.yaml"));
  await pollUntil(
    async () => {
      await client.list(WEBAPP_API_VERSION, "WebApp");
      return { done: true, value: undefined };
    },
    { description: "the WebApp CRD to be served", timeoutMs: 30_000 },
  );
}

/** The sample WebApp, placed in `namespace`. */
export async function sampleWebApp(namespace: string): Promise<KubeObject> {
  const sample = await readExampleYaml("samples/webapp.yaml");
  return { ...sample, metadata: { ...sample.metadata, namespace } };
}

export function readyConditionOf(
  app: KubeObject,
): { status?: string; lastTransitionTime?: string } | undefined {
  const status = app.status as
    { conditions?: { type: string; status: string; lastTransitionTime: string }[] } | undefined;
  return status?.conditions?.find((c) => c.type === "Ready");
}

/** Waits until the WebApp is Ready for its current generation. */
export async function waitConverged(
  client: KubeClient,
  namespace: string,
  name: string,
  timeoutMs = 60_000,
): Promise<KubeObject> {
  return pollUntil(
    async () => {
      const app = await client.get({ apiVersion: WEBAPP_API_VERSION, kind: "WebApp", name, namespace });
      const observed = (app.status as { observedGeneration?: number } | undefined)?.observedGeneration;
      const ready = readyConditionOf(app)?.status;
      return ready === "True" && observed === app.metadata?.generation
        ? { done: true, value: app }
        : {
            done: false,
            reason: `Ready=${ready}, observedGeneration=${observed}, generation=${app.metadata?.generation}`,
          };
    },
    { description: `WebApp ${name} to converge`, timeoutMs },
  );
}
