import { SELECTABLE_SUITES } from "../suites/suite-names.js";
import { z } from "zod";
import { imageReference, operatorDeploySchema, operatorModeIssues } from "./operator-deploy.js";
import { parsePath, PathSyntaxError } from "../util/object-paths.js";
import { operatorWebhooksSchema, webhookSettingIssues } from "./operator-webhooks.js";
import { metricsSettingIssues, operatorMetricsSchema } from "./operator-metrics.js";

/**
 * The contract file, `reconcile-conformance.yaml`: one schema that is the
 * single source of the TypeScript types, the validation and the published
 * JSON Schema (`schema/reconcile-conformance.schema.json`, generated from
 * this by `npm run schema`; a test fails when they differ).
 *
 * Only `operator` (its `command` or its `deploy`), `crds` and `sample` are
 * required; everything else has a default. Paths are relative to the contract file.
 */

/** How many generated updates a run makes at most, unless the contract or the command line says. */
export const DEFAULT_GENERATED_UPDATES = 8;
/** The seed that orders generated updates of equal rank, unless the contract or the command line says. */
export const DEFAULT_EXPLORATION_SEED = 1;

/** Which writes of each update's way a fault follows, unless the contract or the command line says. */
export const UPDATE_FAULT_LINES = ["by-kind", "all", "none"] as const;
/** How many of exploration's generated updates get faults on their way, unless the contract says. */
export const DEFAULT_FAULTED_GENERATED_UPDATES = 1;

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
    webhooks: operatorWebhooksSchema
      .superRefine((value, context) => {
        for (const issue of webhookSettingIssues(value)) {
          context.addIssue({ code: "custom", message: issue.message, path: [...issue.path] });
        }
      })
      .optional(),
    metrics: operatorMetricsSchema
      .superRefine((value, context) => {
        for (const issue of metricsSettingIssues(value)) {
          context.addIssue({ code: "custom", message: issue.message, path: [...issue.path] });
        }
      })
      .optional(),
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

/** What an object can promise to keep: see docs/contract.md, "Promises". */
export const IDENTITIES = ["resourceVersion", "uid", "generation"] as const;

const reason = (what: string) =>
  z
    .string({ error: `expected a reason: ${what}` })
    .trim()
    .min(1, { error: `expected a reason: ${what}` });

const objectPath = z
  .string({ error: 'expected a field path such as "status.lastHeartbeatTime"' })
  .superRefine((text, context) => {
    try {
      parsePath(text);
    } catch (error) {
      if (!(error instanceof PathSyntaxError)) throw error;
      context.addIssue({ code: "custom", message: `not a field path: ${error.message}` });
    }
  })
  .describe(
    'A field path: status.lastHeartbeatTime, metadata.annotations["example.com/config-hash"], status.conditions[type=Ready].lastHeartbeatTime, status.conditions[*].lastHeartbeatTime.',
  );

/** An optional pattern over object names ("*": any run of characters), its error naming `example`. */
function namePattern(example: string) {
  const error = `expected a name pattern, e.g. "${example}"`;
  return z.string({ error }).min(1, { error }).optional();
}

const promise = z
  .strictObject({
    kind: z
      .string({ error: "expected a kind: the custom resource's or a child's, e.g. Deployment" })
      .min(1, { error: "expected a kind: the custom resource's or a child's, e.g. Deployment" })
      .describe("The kind this entry is about: the custom resource's, or a child's."),
    name: namePattern("registration-*").describe(
      'Only objects of the kind whose name matches; "*" stands for any run of characters.',
    ),
    keeps: z
      .array(z.enum(IDENTITIES, { error: `expected one of ${IDENTITIES.join(", ")}` }), {
        error: `expected a list of ${IDENTITIES.join(", ")}`,
      })
      .default([...IDENTITIES])
      .describe(
        "What the operator keeps stable on these objects (default all three): resourceVersion (no write that changes anything without a cause), uid (never deleted and recreated), generation (spec never rewritten without a cause). Leave one out to withdraw that promise; the checks then skip these objects for it, saying why.",
      ),
    reason: reason("why a promise is withdrawn")
      .optional()
      .describe("Why: required when keeps leaves something out."),
    volatile: z
      .array(
        z.strictObject({
          path: objectPath,
          reason: reason("why the operator rewrites this field").describe(
            "Why the operator rewrites this field on purpose.",
          ),
        }),
        { error: "expected a list of { path, reason }" },
      )
      .default([])
      .describe(
        "Fields the operator rewrites on purpose (a heartbeat, a config hash): a write that changes nothing else does not count against no-avoidable-writes or last-transition-time, and still counts as a request for no-redundant-writes.",
      ),
  })
  .superRefine((value, context) => {
    const withdrawn = IDENTITIES.filter((i) => !value.keeps.includes(i));
    if (withdrawn.length > 0 && value.reason === undefined) {
      context.addIssue({
        code: "custom",
        message: `expected a reason: keeps leaves out ${withdrawn.join(", ")}`,
        path: ["reason"],
      });
    }
  });

/** "2026-12-31" */
const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

const waiver = z.strictObject({
  check: z
    .string({ error: 'expected a check id, e.g. "status-stability/no-avoidable-writes"' })
    .regex(/^[a-z-]+\/[a-z-]+$/, {
      error: 'expected a check id, e.g. "status-stability/no-avoidable-writes"',
    })
    .describe('The check whose failures it waives, e.g. "status-stability/no-avoidable-writes".'),
  target: z
    .string({ error: 'expected a scenario target pattern, e.g. "Service/* spec.ports*"' })
    .min(1)
    .optional()
    .describe(
      'Only scenarios whose target matches (as the report names them; "*" stands for any run of characters), e.g. "Service/web spec.selector" or "create services/*". Default: every scenario of the check.',
    ),
  reason: reason("why this failure is accepted for now").describe("Why the failure is accepted for now."),
  until: z
    .string({ error: 'expected a date such as "2026-12-31"' })
    .regex(DATE_PATTERN, { error: 'expected a date such as "2026-12-31"' })
    .refine(
      (text) => {
        // "2026-02-30" parses (as 2 March): a real date is one that reads back the same.
        const time = Date.parse(`${text}T00:00:00Z`);
        return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 10) === text;
      },
      { error: "not a real date" },
    )
    .optional()
    .describe("The last day (UTC) the waiver holds; after it the run fails and names it."),
});

/** The suites a contract can choose (the registry's names: src/suites/suite-names.ts). */
export { SELECTABLE_SUITES } from "../suites/suite-names.js";
const SUITES = SELECTABLE_SUITES;

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
    fixtures: z
      .array(relativePath("a manifest of objects the sample needs"), {
        error: "expected a list of manifest paths",
      })
      .default([])
      .describe(
        "Manifests of what the sample refers to and must exist first (a Secret with credentials, a ConfigMap, another custom resource, a StorageClass). Namespaced objects are created in each scenario's namespace before the sample and go with it; cluster-scoped ones once per run, removed at its end. Never the operator's children: never drifted, never counted, never crashed on; an operator write that changes one is named in the evidence of that scenario's verdicts.",
      ),
    images: z
      .array(
        imageReference(
          'expected a local image your workflow builds or pulls, e.g. "example.com/web:ci" (lowercase repository, optional tag)',
        ),
        { error: "expected a list of image references" },
      )
      .default([])
      .describe(
        "Images the operator's children run (operands), loaded into a kind cluster before the run (kind load docker-image), so their Pods start with no registry: build or pull each one before the kit runs. The deployed operator's own image is loaded anyway. kwok runs no containers and needs none; an existing cluster must be able to pull them itself.",
      ),
    updates: z
      .array(update)
      .default([])
      .describe(
        "Spec changes applied one after another (merge patches); each must converge. The references run each past the API server first (a dry run, webhooks included): one it refuses, or one that changes nothing the server keeps (a field the schema prunes, a value it already has), leaves the checks that need it inconclusive, naming it.",
      ),
    generatedUpdates: z
      .union(
        [
          z.boolean(),
          z.strictObject({
            max: z
              .int({ error: "generatedUpdates.max: expected a whole number, 0 or more" })
              .min(0, { error: "generatedUpdates.max: expected a whole number, 0 or more" })
              .default(DEFAULT_GENERATED_UPDATES)
              .describe(
                `At most this many generated updates (default ${DEFAULT_GENERATED_UPDATES}); 0 makes none.`,
              ),
            seed: z
              .int({ error: "generatedUpdates.seed: expected a whole number, 0 or more" })
              .min(0, { error: "generatedUpdates.seed: expected a whole number, 0 or more" })
              .default(DEFAULT_EXPLORATION_SEED)
              .describe(
                `Orders candidates of equal rank (default ${DEFAULT_EXPLORATION_SEED}): the same seed makes the same choice, so a rerun reproduces a generated update by its name.`,
              ),
          }),
        ],
        { error: "expected true, false, or { max, seed }" },
      )
      .default(true)
      .describe(
        `Spec exploration: updates the kit makes up from the CRD's schema and the spec the contract's \`updates\` end on, for differential/update-equals-creation to judge beside the contract's own. Every field the schema types, nested ones included: a number within its bounds, another enum value or a string in its own form (a pattern, a format, a URL or an image reference is left alone), a boolean flipped, an optional field set or removed, a list element or a map key added and removed. Each candidate is created in a dry run first; what the API server refuses (CEL rules, webhooks) or keeps unchanged is dropped and listed in the report. Candidates whose value shows in a child of the reference come first, then a seeded order; each starts from that spec, so its verdict is about its one change. \`true\` (the default): at most ${DEFAULT_GENERATED_UPDATES}, seed ${DEFAULT_EXPLORATION_SEED}; \`false\`: none. The CLI's --generated-updates and --seed override it. How candidates are made and chosen: docs/checks/differential/update-equals-creation.md.`,
      ),
    updateFaults: z
      .strictObject({
        lines: z
          .enum(UPDATE_FAULT_LINES, {
            error: `updateFaults.lines: expected ${UPDATE_FAULT_LINES.join(", ")}`,
          })
          .default("by-kind")
          .describe(
            "Which writes the operator makes on its way from one spec to the next get a fault (a crash right after the write): `by-kind` (the default) the first of each kind (a create of Deployments, an update of Services, a delete of StatefulSets; status writes left out, as every one of the sample's creation is swept), `all` every one, status writes included, `none` no update's way (the sample's creation keeps all of its). The CLI's --update-faults overrides it.",
          ),
        generatedUpdates: z
          .int({ error: "updateFaults.generatedUpdates: expected a whole number, 0 or more" })
          .min(0, { error: "updateFaults.generatedUpdates: expected a whole number, 0 or more" })
          .default(DEFAULT_FAULTED_GENERATED_UPDATES)
          .describe(
            `How many of spec exploration's generated updates (generatedUpdates), in the order they were chosen, also get faults on their way (default ${DEFAULT_FAULTED_GENERATED_UPDATES}); the contract's own updates always do, unless \`lines\` is \`none\`.`,
          ),
      })
      .default({ lines: "by-kind", generatedUpdates: DEFAULT_FAULTED_GENERATED_UPDATES })
      .describe(
        "Faults on the way to every spec, not only the sample's creation: for each update (the contract's, and the first generated ones), the crash sweep (idempotency/crash-after-create and crash-after-write) crashes the operator right after a write it makes on the way from the previous spec and restarts it; staleness/restart-from-the-past restarts it with its caches from before that write; staleness/own-create-unseen holds the events of a kind of child the way creates or deletes. Each compares the end with the reference of the updated spec. Each line is a scenario: this bounds how many. Each check's page says which paths it sweeps.",
      ),
    readiness,
    clock: z
      .strictObject({
        horizon: z
          .string({ error: 'clock.horizon: expected a duration such as "15s" or "2m"' })
          .regex(DURATION_PATTERN, { error: 'clock.horizon: expected a duration such as "15s" or "2m"' })
          .optional()
          .describe(
            "How long after the sample's create every life (each reference, each scenario) waits before its first convergence counts, so that what the operator's own clock makes by then (a schedule's first ticks) is in every life and compared like any child. Default: none, and what the clock makes is left out of comparisons with a life that lacks it. Each life then takes at least this long.",
          ),
        onePerTick: z
          .array(
            z.strictObject({
              kind: z
                .string({ error: "expected a kind, e.g. Job" })
                .min(1, { error: "expected a kind, e.g. Job" })
                .describe("The kind of the objects the clock makes one of per tick."),
              name: namePattern("nightly-*").describe(
                'Only the objects of the kind whose name matches this pattern ("*": any run of characters).',
              ),
            }),
            { error: "expected a list of { kind, name? }" },
          )
          .default([])
          .describe(
            "The objects the operator's clock makes one of per tick, a record each (a schedule's Jobs, backups, snapshots): a later tick of the clock that changes one beyond its metadata, or whose create collides with one, fails idempotency/no-tick-overwrite, even when the write that created it came amid other work and could not be told as the clock's. Without it, only objects whose create was told as a tick's are judged so.",
          ),
      })
      .default({ onePerTick: [] })
      .describe(
        "For an operator that acts on a clock of its own (schedules, timers, resyncs): writes that answer nothing the kit did are told apart either way; this says how long to wait for them, and what each tick makes.",
      ),
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
      .describe(
        "Which managed fields of the children the drift suite perturbs. A position in a keyed list (spec.ports[1]) counts in the list's key order (by name, else type, else a value key such as port), whatever order the operator wrote it in.",
      ),
    suites: z
      .array(z.enum(SUITES, { error: `expected one of ${SUITES.join(", ")}` }))
      .default([...SUITES])
      .describe("Suites to run (default: all)."),
    promises: z
      .array(promise, { error: "expected a list of { kind, name?, keeps?, reason?, volatile? }" })
      .default([])
      .describe(
        "What the operator promises to keep stable, per object, and the fields it rewrites on purpose. Without an entry an object promises everything.",
      ),
    waivers: z
      .array(waiver, { error: "expected a list of { check, target?, reason, until? }" })
      .default([])
      .describe(
        "Known failures accepted for now, each with a reason: shown as waived, not failing the run. One that matches no failure is reported as stale; one past its date fails the run.",
      ),
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
