import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { actionSettings, DEFAULT_KIND_VERSION } from "../../../src/action/inputs.js";
import { UsageError } from "../../../src/errors.js";

const root = join(import.meta.dirname, "../../..");
const action = parse(readFileSync(join(root, "action.yml"), "utf8")) as {
  inputs: Record<string, { description: string; default?: string; required?: boolean }>;
  outputs: Record<string, { description: string }>;
  runs: { using: string; main: string; post: string; "post-if"?: string };
};

/** The runner passes every input with its default; a test gives the ones it sets. */
function reader(set: Record<string, string> = {}) {
  const read: string[] = [];
  const input = (name: string) => {
    read.push(name);
    if (!(name in action.inputs))
      throw new Error(`the code reads input ${name}, which action.yml does not declare`);
    return set[name] ?? action.inputs[name]?.default ?? "";
  };
  return { input, read };
}

describe("action.yml", () => {
  it("runs on node24 with a main and a post step from dist/", () => {
    expect(action.runs).toMatchObject({ using: "node24", main: "dist/index.js", post: "dist/post.js" });
    expect(action.runs["post-if"]).toBe("always()");
  });

  it("documents every input with its default, and the code reads every input it declares", () => {
    const { input, read } = reader();
    actionSettings(input);
    expect(new Set(read)).toEqual(new Set(Object.keys(action.inputs)));
    for (const [name, spec] of Object.entries(action.inputs)) {
      expect(spec.description, name).toMatch(/\w{3,}/);
      expect(spec.default, `${name} has no default`).toBeDefined();
      expect(name).toMatch(/^[a-z]+(-[a-z]+)*$/);
    }
    expect(action.inputs["kind-version"]?.default).toBe(DEFAULT_KIND_VERSION);
  });

  it("declares the outputs the main step sets", () => {
    const source = readFileSync(join(root, "src/main.ts"), "utf8");
    const set = new Set(
      [...source.matchAll(/setOutput\("([a-z-]+)"/g)]
        .map((m) => m[1])
        .concat(["passed", "failed", "warned", "waived", "skipped", "inconclusive"]),
    );
    expect(new Set(Object.keys(action.outputs))).toEqual(set);
  });
});

describe("actionSettings", () => {
  it("takes how to get the kwok binaries from input binaries, naming it when it is wrong", () => {
    expect(actionSettings(reader({ cluster: "kwok", binaries: "build" }).input).binaries).toBe("build");
    expect(() => actionSettings(reader({ binaries: "fetch" }).input)).toThrow(
      'input binaries: "fetch" is not a way to get the binaries: use auto, download, build',
    );
  });

  it("leaves an empty binaries input to RECONCILE_CONFORMANCE_BINARIES, as the CLI does; the input wins when set", () => {
    const env = { RECONCILE_CONFORMANCE_BINARIES: "build" };
    expect(actionSettings(reader({ cluster: "kwok" }).input, env).binaries).toBe("build");
    expect(actionSettings(reader({ cluster: "kwok", binaries: "download" }).input, env).binaries).toBe(
      "download",
    );
    expect(() => actionSettings(reader().input, { RECONCILE_CONFORMANCE_BINARIES: "fetch" })).toThrow(
      'RECONCILE_CONFORMANCE_BINARIES: "fetch" is not a way to get the binaries',
    );
  });

  it("maps the defaults to a kind run that fails the step on violations", () => {
    const settings = actionSettings(reader().input);
    expect(settings.request.cluster).toEqual({ provider: "kind", nodeImage: undefined });
    expect(settings.request).toMatchObject({
      config: "reconcile-conformance.yaml",
      reportDir: "reconcile-conformance-report",
      strict: false,
      keep: false,
    });
    expect(settings.request.shard).toBeUndefined();
    expect(settings.request.suites).toBeUndefined();
    expect(settings).toMatchObject({
      failOnViolation: true,
      keepCluster: false,
      kindVersion: "v0.33.0",
      binaries: "auto",
    });
  });

  it("maps lists, switches, the shard and kube-version", () => {
    const settings = actionSettings(
      reader({
        suites: "drift, idempotency",
        checks: "drift/managed-field\nconflict/child-update",
        strict: "true",
        "fail-on-violation": "false",
        shard: "2/3",
        "kube-version": "v1.34.2",
        "keep-cluster": "TRUE",
      }).input,
    );
    expect(settings.request.suites).toEqual(["drift", "idempotency"]);
    expect(settings.request.checks).toEqual(["drift/managed-field", "conflict/child-update"]);
    expect(settings.request).toMatchObject({ strict: true, keep: true, shard: "2/3" });
    expect(settings.request.cluster.nodeImage).toBe("kindest/node:v1.34.2");
    expect(settings).toMatchObject({ failOnViolation: false, keepCluster: true });
  });

  it("passes a kubeconfig only to the existing cluster", () => {
    const existing = actionSettings(reader({ cluster: "existing", kubeconfig: "/k/config" }).input);
    expect(existing.request.cluster).toEqual({ provider: "existing", kubeconfig: "/k/config" });
    expect(actionSettings(reader({ cluster: "kwok" }).input).request.cluster).toEqual({ provider: "kwok" });
  });

  it.each([
    [{ cluster: "minikube" }, 'input cluster: "minikube"'],
    [{ strict: "maybe" }, 'input strict: "maybe" is not a boolean'],
    [{ "kube-version": "1.35" }, 'input kube-version: "1.35"'],
    [{ cluster: "kwok", "kube-version": "v1.30.0" }, "runs Kubernetes v1.35.4"],
    [
      { cluster: "kwok", "node-image": "kindest/node:v1.35.0" },
      "input node-image applies only to cluster kind",
    ],
  ])("refuses %j, naming the input", (set, message) => {
    expect(() => actionSettings(reader(set).input)).toThrow(UsageError);
    expect(() => actionSettings(reader(set).input)).toThrow(message);
  });
});
