import { z } from "zod";
import { operatorDeploySchema, operatorModeIssues } from "./operator-deploy.js";

/**
 * The contract file, `reconcile-conformance.yaml`: one schema that is the
 * single source of the TypeScript types, the validation and the published
 * JSON Schema (`schema/reconcile-conformance.schema.json`, generated from
 * this by `npm run schema`; a test fails when they differ).
 *
 * Only `operator` (its `command` or its `deploy`), `crds` and `sample` are
 * required; everything else has a default. Paths are relative to the contract file.
 */

/** "1.5s", "500ms", "2m": how the contract writes durations. */
const DURATION_PATTERN = /^(\d+(\.\d+)?)(ms|s|m)$/;

const duration = (what: string, byDefault: string) =>
  z
    .string({ error: `${what}: expected a duration such as "1.5s", "500ms" or "2m"` })
    .regex(DURATION_PATTERN, { error: `${what}: expected a duration such as "1.5s", "500ms" or "2m"` })
    .default(byDefault)
    .describe(`${what} (default ${byDefault})`);

const relativePath = (what: string) =>
  z
    .string({ error: `${what}: expected a path relative to the contract file` })
    .min(1, { error: `${what}: expected a path relative to the contract file` })
    .describe(`${what}, relative to the contract file`);

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: "expected an environment variable name" });

const operator = z
  .strictObject({
    command: z
      .array(z.string(), {
        error: 'expected the command as a list of words, e.g. ["./bin/manager", "--leader-elect=false"]',
      })
      .min(1, { error: 'expected at least the program, e.g. ["./bin/manager"]' })
      .optional()
      .describe(
        "The operator as a local process: its command line as a list of words; it runs with KUBECONFIG pointing at the kit's proxy. Exactly one of command and deploy.",
      ),
    deploy: operatorDeploySchema.optional(),
    workingDir: relativePath(
      "the directory the command runs in (default: the contract's directory)",
    ).optional(),
    env: z
      .record(envName, z.string({ error: "expected a string value" }))
      .default({})
      .describe("Variables added to the operator's environment."),
    passThroughEnv: z
      .array(envName)
      .default([])
      .describe(
        "Variables the kit withholds from the operator by default (ACTIONS_*, INPUT_*, GITHUB_TOKEN) that it should get anyway.",
      ),
    startTimeout: duration("how long the operator may take to list or watch its custom resource", "60s"),
    namespaced: z
      .strictObject({
        arg: z
          .string()
          .regex(/^-{1,2}[A-Za-z0-9][A-Za-z0-9-]*$/, { error: 'expected a flag such as "--watch-namespace"' })
          .optional()
          .describe('A flag the kit appends as "<flag>=<namespace>", e.g. "--watch-namespace".'),
        env: envName.optional().describe('A variable the kit sets to the namespace, e.g. "WATCH_NAMESPACE".'),
      })
      .refine((n) => (n.arg === undefined) !== (n.env === undefined), {
        error: "expected exactly one of arg or env",
      })
      .optional()
      .describe(
        "How to confine the operator to one namespace. With it, the kit gives each scenario's operator process its scenario's namespace and runs scenarios side by side (run --parallel); without it, the operator is taken to watch the whole cluster and scenarios run one at a time.",
      ),
  })
  .superRefine((value, context) => {
    for (const issue of operatorModeIssues(value)) {
      context.addIssue({ code: "custom", message: issue.message, path: [...issue.path] });
    }
  })
  .describe(
    "How to run the operator under test: a local command (any cluster), or deployed into the cluster from its image and manifests (kind).",
  );

const readiness = z
  .union(
    [
      z
        .enum(["conditions", "quiet"])
        .describe(
          '"conditions": a Ready or Available condition True whose observedGeneration (on the condition or in status) equals metadata.generation. "quiet": no predicate; converged when the operator is quiet and its children exist.',
        ),
      z
        .strictObject({
          cel: z
            .string({ error: "expected a CEL expression over the custom resource as `self`" })
            .min(1)
            .describe(
              "A CEL expression over the custom resource as `self`, e.g. self.status.availableReplicas == self.spec.replicas",
            ),
        })
        .describe("Ready when this CEL expression is true."),
    ],
    { error: 'expected "conditions", "quiet" or { cel: "<expression over self>" }' },
  )
  .default("conditions")
  .describe("When the custom resource counts as ready (default: conditions).");

const update = z
  .record(z.string(), z.unknown(), { error: "expected an object, e.g. { spec: { replicas: 2 } }" })
  .refine((value) => Object.keys(value).length > 0, { error: "expected at least one field to change" })
  .describe("A merge patch of the sample custom resource, e.g. { spec: { replicas: 2 } }.");

const resourceRef = z.strictObject({
  group: z.string().describe('API group; "" for the core group.'),
  resource: z.string().min(1).describe('Plural resource, e.g. "events".'),
});

export const SUITES = ["conflict", "idempotency", "drift", "status-stability", "staleness"] as const;

export const contractSchema = z
  .strictObject({
    $schema: z.string().optional().describe("The JSON Schema this file follows (for editors)."),
    operator,
    crds: z
      .array(relativePath("a CRD manifest"), { error: "expected a list of CRD manifest paths" })
      .min(1, { error: "expected at least one CRD manifest" })
      .describe("CRD manifests the kit installs before the operator starts."),
    sample: relativePath("the sample custom resource").describe(
      "The sample custom resource every scenario creates (in its own namespace).",
    ),
    updates: z
      .array(update)
      .default([])
      .describe("Spec changes applied one after another; each must converge."),
    readiness,
    quietPeriod: duration("how long the operator must make no write to count as converged", "1.5s"),
    timeouts: z
      .strictObject({
        converge: duration("how long a scenario may take to converge", "60s"),
        crdEstablished: duration("how long an installed CRD may take to be served", "30s"),
      })
      .default({ converge: "60s", crdEstablished: "30s" })
      .describe("Per-step timeouts."),
    ignoreWrites: z
      .array(resourceRef)
      .default([
        { group: "", resource: "events" },
        { group: "events.k8s.io", resource: "events" },
        { group: "coordination.k8s.io", resource: "leases" },
      ])
      .describe("Writes the oracles leave out (default: Events and Leases)."),
    drift: z
      .strictObject({
        include: z
          .array(z.string())
          .default([])
          .describe('Extra drift targets, e.g. "Service/spec.sessionAffinity".'),
        exclude: z
          .array(z.string())
          .default([])
          .describe('Default drift targets to leave out, e.g. "Deployment/spec.replicas".'),
      })
      .default({ include: [], exclude: [] })
      .describe("Which managed fields of the children the drift suite perturbs."),
    suites: z
      .array(z.enum(SUITES, { error: `expected one of ${SUITES.join(", ")}` }))
      .default([...SUITES])
      .describe("Suites to run (default: all)."),
  })
  .describe("reconcile-conformance contract: how to run an operator and what it promises.");

/** The contract as written (before defaults). */
export type ContractInput = z.input<typeof contractSchema>;
/** The contract with every default filled in (paths still as written, durations as text). */
export type ContractDocument = z.output<typeof contractSchema>;

/** Milliseconds in a duration the schema accepted. */
export function durationMs(text: string): number {
  const match = DURATION_PATTERN.exec(text);
  if (!match) throw new Error(`not a duration: ${text}`);
  const value = Number(match[1]);
  const unit = match[3];
  return Math.round(value * (unit === "ms" ? 1 : unit === "s" ? 1000 : 60_000));
}

/** The published JSON Schema, generated from the same definition. */
export function contractJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(contractSchema, { io: "input", target: "draft-2020-12" }),
    title: "reconcile-conformance contract",
  };
}
