import { basename, dirname, relative } from "node:path";
import {
  contractSchema,
  DEFAULT_EXPLORATION_SEED,
  DEFAULT_GENERATED_UPDATES,
  SELECTABLE_SUITES,
} from "../contract/contract-schema.js";
import { DEFAULT_METRICS_SETTLE } from "../contract/operator-metrics.js";
import { DEFAULT_WEBHOOK_PORT } from "../contract/operator-webhooks.js";
import { metricsArgs, type MetricsFound } from "./metrics-layout.js";
import { fieldDescription, fieldVariants } from "./contract-descriptions.js";
import type { OperatorLayout } from "./operator-layout.js";
import { inline, inlineMap, quoted, renderStarter, wrap, type Field } from "./starter-rendering.js";
import { toPosix } from "./user-paths.js";

// The starter contract `init` writes: what init found, field by field, with what it has to say about
// each value it chose (written with the schema's descriptions by starter-rendering.ts). Pure: the
// text comes back, init writes it.

/** What the starter is written from. Paths are absolute. */
export interface StarterContractInput {
  readonly layout: OperatorLayout;
  /** The project directory (--dir). */
  readonly dir: string;
  /** Where the contract goes: its paths are written relative to this. */
  readonly outputDir: string;
  /** The JSON Schema for the `# yaml-language-server` line. */
  readonly schemaRef: string;
  /** How long init's own `go build` of the operator took, when it built it. */
  readonly firstBuildSeconds?: number;
}

/** The starter contract's text: valid YAML that loadContract accepts, with the schema's words as comments. */
export function starterContract(input: StarterContractInput): string {
  return renderStarter(starterFields(input), [
    `yaml-language-server: $schema=${input.schemaRef}`,
    ...wrap(fieldDescription([]), 0),
    ...wrap(
      `Of ${basename(input.dir)}, written by \`reconcile-conformance init\`. What init guessed is a start; read each comment and adjust. Paths are relative to this file. A field shown commented out is not set: uncomment it to set it.`,
      0,
    ),
  ]);
}

// ---------------------------------------------------------------- what the starter holds

/**
 * operator.env and the variables the operator's code reads. Kubebuilder's
 * webhook switch is set to "true" when init found the webhooks' manifests
 * (the kit serves them: operator.webhooks), and to "false" when it did not:
 * with them on and nothing to install, the operator would exit at start for
 * want of a serving certificate. The others are shown commented out, each
 * with a placeholder to fill in: no default can be read off the code, and
 * set to "" a variable is not unset (os.LookupEnv tells the two apart). The
 * namespace variable is the kit's to set.
 */
function environmentField(
  reads: OperatorLayout["environment"],
  namespaceVariable: string | undefined,
  webhooksFound: boolean,
): Field {
  const own = reads.filter((r) => r.name !== namespaceVariable);
  const webhooks = own.find((r) => r.name === WEBHOOK_SWITCH);
  const others = own.filter((r) => r !== webhooks);
  const switched = webhooks ? { [WEBHOOK_SWITCH]: quoted(webhooksFound ? "true" : "false") } : {};
  return {
    key: "env",
    value: switched,
    notes: [
      ...(webhooks
        ? [
            webhooksFound
              ? `${WEBHOOK_SWITCH}: read in ${webhooks.file} (${webhooks.how}); "true" keeps kubebuilder's webhooks on: the kit serves them (operator.webhooks).`
              : `${WEBHOOK_SWITCH}: read in ${webhooks.file} (${webhooks.how}); "false" switches kubebuilder's webhooks off, as init found no webhook configurations (config/webhook/manifests.yaml, written by make manifests): name them under operator.webhooks and set this to "true" to test the operator with its webhooks.`,
          ]
        : []),
      ...others.map((r) => `${r.name}: read in ${r.file} (${r.how}); no default could be read off the code.`),
    ],
    ...(others.length > 0
      ? {
          example: {
            intro: "With the variables it reads (uncomment, keep those the run needs, give each its value):",
            key: "env",
            value: {
              ...switched,
              ...Object.fromEntries(others.map((r) => [r.name, quoted("<value>")])),
            },
          },
        }
      : {}),
  };
}

/** operator.metrics: the flags init found, or an example to uncomment. */
function metricsField(found: MetricsFound | undefined): Field {
  const defaults = [
    { key: "path", commentedOut: true, value: quoted("/metrics") },
    { key: "settle", commentedOut: true, value: quoted(DEFAULT_METRICS_SETTLE) },
  ];
  if (found === undefined) {
    return {
      key: "metrics",
      commentedOut: true,
      value: {
        args: inline([quoted("--metrics-bind-address=127.0.0.1:{port}"), quoted("--metrics-secure=false")]),
        env: {},
        path: quoted("/metrics"),
        settle: quoted(DEFAULT_METRICS_SETTLE),
      },
      notes: [
        "Not set: no metrics address flag found in the main package, so the quiet period alone decides when the operator is done. If it publishes controller-runtime's metrics, uncomment this with its flag:",
      ],
    };
  }
  const why = [found.address.why, ...(found.secure ? [found.secure.why] : [])].join(" and ");
  return {
    key: "metrics",
    fields: [
      {
        key: "args",
        value: inline(metricsArgs(found).map(quoted)),
        notes: [
          `Set because ${why}: each scenario's operator publishes its work queues on a port of its own over plain HTTP, and the kit knows it is done when they are empty.`,
        ],
      },
      { key: "env", commentedOut: true, value: {} },
      ...defaults,
    ],
  };
}

/** kubebuilder's main.go runs the webhooks unless this is "false". */
const WEBHOOK_SWITCH = "ENABLE_WEBHOOKS";

/** operator.webhooks: what init found, or an example to uncomment. */
function webhooksField(found: OperatorLayout["webhooks"], at: (path: string) => string): Field {
  if (found === undefined) {
    return {
      key: "webhooks",
      commentedOut: true,
      value: {
        manifests: quoted("config/webhook/manifests.yaml"),
        port: DEFAULT_WEBHOOK_PORT,
        portArg: "--webhook-port",
        portEnv: "WEBHOOK_PORT",
        certDir: "/tmp/k8s-webhook-server/serving-certs",
        certDirArg: "--webhook-cert-path",
        certDirEnv: "WEBHOOK_CERT_DIR",
        conversion: inline([]),
      },
      notes: [
        "Not set: no webhook configurations found in config/webhook. If the operator serves webhooks, uncomment this, keeping at most one of portArg and portEnv, and of certDir, certDirArg and certDirEnv:",
      ],
    };
  }
  const unset = (key: string, value: unknown, notes: string[] = []): Field => ({
    key,
    commentedOut: true,
    value,
    notes,
  });
  return {
    key: "webhooks",
    fields: [
      {
        key: "manifests",
        value: found.files.map((f) => quoted(at(f))),
        notes: [
          `Found: ${found.webhooks.join(", ")}. Each scenario gets its own copy, calling its operator at https://127.0.0.1 with a certificate the kit makes.`,
        ],
      },
      { key: "port", value: DEFAULT_WEBHOOK_PORT },
      found.portArg
        ? {
            key: "portArg",
            value: found.portArg.arg,
            notes: [`Set because ${found.portArg.why}: each scenario's operator gets a port of its own.`],
          }
        : unset("portArg", "--webhook-port", [
            "Not set: no flag for the webhook server's port found, so every scenario's operator listens on port, and scenarios run one at a time. With such a flag (or variable) they run side by side:",
          ]),
      unset("portEnv", "WEBHOOK_PORT"),
      unset("certDir", "/tmp/k8s-webhook-server/serving-certs", [
        "Left to the default (TMPDIR), which an unmodified kubebuilder operator reads, unless a flag below says where.",
      ]),
      found.certDirArg
        ? {
            key: "certDirArg",
            value: found.certDirArg.arg,
            notes: [`Set because ${found.certDirArg.why}: the kit writes tls.crt and tls.key there.`],
          }
        : unset("certDirArg", "--webhook-cert-path"),
      unset("certDirEnv", "WEBHOOK_CERT_DIR"),
      {
        key: "conversion",
        value: [],
        example: {
          intro: "If the operator converts between versions of a CRD (its types have Hub and ConvertTo):",
          value: [quoted("<plural>.<group>")],
        },
      },
    ],
  };
}

/**
 * A `go run` operator's startTimeout: its first start compiles it. From the
 * build init timed, with room for a machine whose cache is cold (CI): half
 * again as long, plus a minute; never under the 180 s of an unmeasured one.
 */
export function goRunStartTimeout(firstBuildSeconds: number | undefined): Field {
  if (firstBuildSeconds === undefined) {
    return {
      key: "startTimeout",
      value: "180s",
      notes: ["Longer here: the first `go run` compiles the operator."],
    };
  }
  const seconds = Math.max(180, Math.ceil(firstBuildSeconds * 1.5 + 60));
  return {
    key: "startTimeout",
    value: `${seconds}s`,
    notes: [
      `init built the operator in ${firstBuildSeconds} s; a first \`go run\` where Go's build cache is cold (a CI machine) compiles as long: this allows half again as long, plus a minute.`,
    ],
  };
}

function starterFields({ layout, dir, outputDir, firstBuildSeconds }: StarterContractInput): Field[] {
  // The defaults, from the schema itself, so the starter shows what a field left alone means.
  const defaults = contractSchema.parse({ operator: { command: ["x"] }, crds: ["x"], sample: "x" });
  const at = (path: string) => toPosix(relative(outputDir, path)) || ".";
  const { command, namespaced, crds, sample, others, updates, readiness, leftAlone, schedule } = layout;
  const leftAloneNote =
    leftAlone.length > 0
      ? [`Left alone: ${leftAlone.map((f) => `spec.${f.field} (${f.why})`).join("; ")}.`]
      : [];
  const formNotes = updates
    .filter((u) => u.form !== undefined)
    .map((u) => `spec.${u.field} reads as a ${u.form}: changed to another valid one, not suffixed.`);

  const workingDir = at(dir);
  const crdDirs = [...new Set(crds.files.map((f) => at(dirname(f))))];
  const crdNotes = [
    (crds.origin === "--crds"
      ? "Given with --crds."
      : `Found: every file with a CustomResourceDefinition in ${crdDirs.join(", ")}.`) +
      (crds.origin.includes("config/crd/bases")
        ? " Regenerate them (make manifests) when the API changes."
        : ""),
  ];
  if (crds.skipped.length > 0) {
    crdNotes.push(
      `Left out, as they define the same CRDs as a file listed (use one or the other): ${crds.skipped.map((s) => at(s.file)).join(", ")}.`,
    );
  }
  const sampleNotes = [`This one: ${sample.kind} ${sample.name}.`];
  if (others.length > 0) {
    sampleNotes.push(
      `Other samples beside it (this one is the first whose kind the CRDs serve): ${others.map((o) => `${at(o.file)} (${o.kind})`).join(", ")}.`,
    );
  }

  return [
    {
      key: "operator",
      fields: [
        { key: "command", value: inline(command.words.map(quoted)), notes: [command.notes] },
        { key: "deploy", commentedOut: true, value: deployExample() },
        workingDir === "."
          ? { key: "workingDir", commentedOut: true, value: "." }
          : { key: "workingDir", value: quoted(workingDir) },
        environmentField(
          layout.environment,
          "env" in namespaced ? namespaced.env : undefined,
          layout.webhooks !== undefined,
        ),
        { key: "passThroughEnv", value: defaults.operator.passThroughEnv },
        command.goRun
          ? goRunStartTimeout(firstBuildSeconds)
          : { key: "startTimeout", value: defaults.operator.startTimeout },
        "none" in namespaced
          ? {
              key: "namespaced",
              commentedOut: true,
              value: { arg: "--watch-namespace", env: "WATCH_NAMESPACE" },
              notes: [`Not set: ${namespaced.none}. If it can watch a single namespace, uncomment one:`],
            }
          : {
              key: "namespaced",
              value: "arg" in namespaced ? { arg: namespaced.arg } : { env: namespaced.env },
              notes: [
                `Set because ${namespaced.why}; check that it really limits what the operator watches.`,
              ],
            },
        webhooksField(layout.webhooks, at),
        metricsField(layout.metrics),
      ],
    },
    { key: "crds", value: crds.files.map((f) => quoted(at(f))), notes: crdNotes },
    { key: "sample", value: quoted(at(sample.file)), notes: sampleNotes },
    {
      key: "fixtures",
      value: [],
      example: {
        intro: "For example (a manifest beside this file):",
        value: [quoted("fixtures/credentials.yaml")],
      },
    },
    {
      key: "images",
      value: [],
      example: { intro: "For example, on kind:", value: [quoted("example.com/web:ci")] },
    },
    updates.length > 0
      ? {
          key: "updates",
          value: updates.map((u) => ({ spec: { [u.field]: u.to } })),
          notes: [
            `${updates.length === 1 ? "This one was" : "These were"} derived from the CRD's schema (${updates.map((u) => `spec.${u.field}: ${JSON.stringify(u.from)} -> ${JSON.stringify(u.to)}`).join("; ")}) only as ${updates.length === 1 ? "an example" : "examples"}: pick meaningful ones, changes that alter what the operator creates.`,
            ...formNotes,
            ...leftAloneNote,
            ...(updates.length === 1
              ? [
                  "Add a second update, of another field: staleness/missed-intermediate-state and conflict/status-update need two.",
                ]
              : []),
          ],
        }
      : {
          key: "updates",
          value: [],
          notes: [
            "None could be derived from the CRD's schema (no integer or plain string field in the sample's spec); add two.",
            ...leftAloneNote,
          ],
        },
    {
      key: "generatedUpdates",
      // Written out, so that a user sees the budget and the seed and can bound them.
      value: { max: DEFAULT_GENERATED_UPDATES, seed: DEFAULT_EXPLORATION_SEED },
    },
    {
      key: "updateFaults",
      commentedOut: true,
      value: defaults.updateFaults,
      notes: ["The defaults; `lines: all` sweeps every write of each update's way, at a scenario each."],
    },
    {
      key: "readiness",
      value: readiness,
      notes:
        readiness === "quiet" ? [`"quiet" here because the CRD's schema shows no status.conditions.`] : [],
      example: {
        intro: fieldVariants(["readiness"]).find((v) => v.fields.includes("cel"))?.description,
        key: "readiness",
        value: { cel: quoted("self.status.availableReplicas == self.spec.replicas") },
      },
    },
    clockField(schedule),
    { key: "quietPeriod", value: defaults.quietPeriod },
    { key: "timeouts", value: defaults.timeouts },
    {
      key: "ignoreWrites",
      value: defaults.ignoreWrites.map((w) =>
        inlineMap({ group: quoted(w.group), resource: quoted(w.resource) }),
      ),
      notes: ["Add resources the operator writes as a side line, keeping these."],
    },
    { key: "drift", value: defaults.drift },
    {
      key: "suites",
      commentedOut: true,
      value: inline([...SELECTABLE_SUITES]),
      notes: ["To run only some, uncomment and trim:"],
    },
    { key: "promises", value: [], example: { intro: "For example:", value: promisesExample(sample.kind) } },
    { key: "waivers", value: [], example: { intro: "For example:", value: waiversExample() } },
  ];
}

/** The longest schedule period for which init sets a clock horizon: every life waits about that long. */
const LONGEST_HORIZON_PERIOD_MS = 5 * 60_000;

/**
 * `clock`: a horizon of one period and a margin when a spec field of the
 * sample reads as a schedule of the operator's own that ticks often enough;
 * otherwise commented out, with why.
 */
export function clockField(schedule: OperatorLayout["schedule"]): Field {
  const example = { horizon: quoted("30s"), onePerTick: [{ kind: "Job", name: quoted("nightly-*") }] };
  if (schedule === undefined) {
    return {
      key: "clock",
      commentedOut: true,
      value: example,
      notes: [
        "For an operator that acts on a clock of its own (a schedule, a timer): how long each life waits for what it makes, and what each tick makes one of. Uncomment if its children come from one:",
      ],
    };
  }
  const seconds = Math.ceil(schedule.ms / 1000);
  if (schedule.ms > LONGEST_HORIZON_PERIOD_MS) {
    return {
      key: "clock",
      commentedOut: true,
      value: example,
      notes: [
        `spec.${schedule.field} reads as a schedule every ${seconds} s: a horizon that long would make every life that long. Without one, what its clock makes is told apart and left out of comparisons with lives that lack it.`,
      ],
    };
  }
  return {
    key: "clock",
    value: { horizon: quoted(`${seconds + 15}s`) },
    notes: [
      `Set because spec.${schedule.field} reads as a schedule every ${seconds} s: each life (every reference and scenario) waits one period and 15 s after the sample's create, so what its first tick makes is in every life and the checks that need children run on it. Each life takes at least that long.`,
      "If each tick makes an object of its own (a Job, a backup), name its kind under onePerTick (e.g. onePerTick: [{kind: Job}]): idempotency/no-tick-overwrite then judges every such object as a tick's record.",
    ],
  };
}

/** Fresh nodes per starter: the comments are set on them. */
const deployExample = () => ({
  image: quoted("example.com/operator:ci"),
  manifests: quoted("config/default"),
  deployment: inlineMap({ name: "controller-manager", namespace: "system" }),
  container: "manager",
  loadImage: true,
});

function promisesExample(kind: string): unknown[] {
  return [
    {
      kind,
      volatile: [
        { path: "status.lastHeartbeatTime", reason: "the operator stamps a heartbeat every minute" },
      ],
    },
    {
      kind: "ConfigMap",
      name: quoted("session-*"),
      keeps: inline(["resourceVersion", "generation"]),
      reason: "rotated by recreating it every hour",
    },
  ];
}

const waiversExample = () => [
  {
    check: "status-stability/no-redundant-writes",
    reason: quoted("fixed by #123"),
    until: quoted("2027-01-31"),
  },
  {
    check: "drift/managed-field",
    target: quoted("Service/* spec.ports*"),
    reason: "the Service's ports are reconciled by the mesh operator until 2.4",
  },
];
