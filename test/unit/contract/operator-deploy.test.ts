import { describe, expect, it } from "vitest";
import { z } from "zod";
import { UsageError } from "../../../src/errors.js";
import {
  operatorDeploySchema,
  operatorModeIssues,
  parseOperatorDeploy,
} from "../../../src/contract/operator-deploy.js";

/** The proposed `operator` of contract-schema.ts, cut to the fields the mode rule reads. */
const proposedOperator = z
  .strictObject({
    command: z.array(z.string()).min(1).optional(),
    deploy: operatorDeploySchema.optional(),
    workingDir: z.string().optional(),
    passThroughEnv: z.array(z.string()).default([]),
  })
  .superRefine((operator, ctx) => {
    for (const issue of operatorModeIssues(operator)) {
      ctx.addIssue({ code: "custom", message: issue.message, path: [...issue.path] });
    }
  });

function issuesOf(input: unknown): { path: string; message: string }[] {
  const parsed = operatorDeploySchema.safeParse(input);
  if (parsed.success) return [];
  return parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
}

function usageMessage(input: unknown): string {
  try {
    parseOperatorDeploy(input);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error("expected a UsageError");
}

describe("operator.deploy schema", () => {
  it("fills in defaults and always gives manifests as a list", () => {
    expect(parseOperatorDeploy({ image: "controller:latest", manifests: "config/default" })).toEqual({
      image: "controller:latest",
      manifests: ["config/default"],
      loadImage: true,
    });
  });

  it("keeps every field it is given", () => {
    const input = {
      image: "ghcr.io/acme/webapp-operator:v0.1.0",
      manifests: ["deploy/rbac.yaml", "deploy/manager"],
      deployment: { name: "webapp-controller-manager", namespace: "webapp-system" },
      container: "manager",
      loadImage: false,
    };
    expect(parseOperatorDeploy(input)).toEqual(input);
  });

  it.each([
    "controller",
    "controller:latest",
    "localhost:5000/op:dev",
    "ghcr.io/acme/webapp-operator:v0.1.0",
    "registry.example.com:443/team/sub/op_name__x:1.2.3-rc.1",
    `example.com/op@sha256:${"a".repeat(64)}`,
  ])("accepts the image reference %s", (image) => {
    expect(issuesOf({ image, manifests: "m.yaml" })).toEqual([]);
  });

  it.each(["", "example.com/WebApp:ci", "op latest", "op:", ":ci", "op:-bad"])(
    "refuses the image reference %j, naming the field",
    (image) => {
      const issues = issuesOf({ image, manifests: "m.yaml" });
      expect(issues.map((i) => i.path)).toEqual(["image"]);
      expect(issues[0]?.message).toContain("expected the image your workflow builds");
    },
  );

  it("names the field path of each error", () => {
    expect(usageMessage({ manifests: "m.yaml" })).toMatch(/^operator\.deploy\.image: expected the image/);
    expect(usageMessage({ image: "op:ci", manifests: ["a.yaml", ""] })).toBe(
      "operator.deploy.manifests[1]: expected a path relative to the contract file",
    );
    expect(usageMessage({ image: "op:ci", manifests: [] })).toMatch(
      /^operator\.deploy\.manifests: expected a kustomize directory/,
    );
    expect(usageMessage({ image: "op:ci", manifests: 3 })).toBe(
      'operator.deploy.manifests: expected a kustomize directory (e.g. "config/default"), a YAML file, or a list of YAML files and directories',
    );
    expect(usageMessage({ image: "op:ci", manifests: "m", deployment: { name: "x" } })).toBe(
      "operator.deploy.deployment.namespace: expected the Deployment's metadata.namespace",
    );
    expect(usageMessage({ image: "op:ci", manifests: "m", container: "Manager" })).toBe(
      "operator.deploy.container: expected a container name",
    );
    expect(usageMessage({ image: "op:ci", manifests: "m", loadImage: "yes" })).toBe(
      "operator.deploy.loadImage: expected true or false",
    );
    expect(usageMessage({ image: "op:ci", manifests: "m", images: [] })).toBe(
      'operator.deploy: unknown field "images"',
    );
  });

  it("reports every bad field at once, under the path it is given", () => {
    const message = usageMessage({ manifests: [], loadImage: 1 });
    expect(message.split("\n").map((line) => line.split(":")[0])).toEqual([
      "operator.deploy.image",
      "operator.deploy.manifests",
      "operator.deploy.loadImage",
    ]);
    expect(() => parseOperatorDeploy({}, "spec.operator.deploy")).toThrow(/^spec\.operator\.deploy\.image:/);
  });
});

describe("exactly one of operator.command and operator.deploy", () => {
  const deploy = { image: "op:ci", manifests: "config/default" };

  it("accepts either alone", () => {
    expect(proposedOperator.safeParse({ command: ["./bin/manager"] }).success).toBe(true);
    expect(proposedOperator.safeParse({ deploy }).success).toBe(true);
    expect(
      operatorModeIssues({ command: ["./bin/manager"], workingDir: "..", passThroughEnv: ["X"] }),
    ).toEqual([]);
  });

  it("refuses both, and neither, at the field that settles it", () => {
    const both = proposedOperator.safeParse({ command: ["./bin/manager"], deploy });
    expect(both.error?.issues.map((i) => [i.path.join("."), i.message])).toEqual([
      [
        "deploy",
        "expected either command (the operator as a local process) or deploy (the operator in the cluster), not both",
      ],
    ]);
    const neither = proposedOperator.safeParse({});
    expect(neither.error?.issues.map((i) => i.path.join("."))).toEqual(["command"]);
  });

  it("refuses local-process settings with deploy instead of ignoring them", () => {
    const parsed = proposedOperator.safeParse({
      deploy,
      workingDir: "src",
      passThroughEnv: ["GITHUB_TOKEN"],
    });
    expect(parsed.error?.issues.map((i) => i.path.join("."))).toEqual(["workingDir", "passThroughEnv"]);
    // The default (empty) passThroughEnv is not a setting somebody wrote.
    expect(operatorModeIssues({ deploy, passThroughEnv: [] })).toEqual([]);
  });

  it("still generates the published JSON Schema (input side: manifests as a path or a list)", () => {
    const schema = z.toJSONSchema(proposedOperator, { io: "input", target: "draft-2020-12" });
    const properties = (schema.properties ?? {}) as Record<string, { properties?: Record<string, unknown> }>;
    const manifests = properties.deploy?.properties?.manifests as { anyOf?: { type?: string }[] } | undefined;
    expect(manifests?.anyOf?.map((s) => s.type)).toEqual(["string", "array"]);
    expect(Object.keys(properties.deploy?.properties ?? {})).toEqual([
      "image",
      "manifests",
      "deployment",
      "container",
      "loadImage",
    ]);
  });
});
