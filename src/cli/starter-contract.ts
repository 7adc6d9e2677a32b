import { basename, dirname, relative } from "node:path";
import {
  Document,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  Pair,
  Scalar,
  YAMLMap,
  YAMLSeq,
  type ToStringOptions,
} from "yaml";
import { contractSchema, SELECTABLE_SUITES } from "../contract/contract-schema.js";
import { fieldDescription, fieldVariants, ITEMS, type FieldPath } from "./contract-descriptions.js";
import type { OperatorLayout } from "./operator-layout.js";
import { toPosix } from "./user-paths.js";

// The starter contract `init` writes: a yaml Document of what init found, each field preceded by
// the contract schema's description of it (contract-descriptions.ts), then by what init has to
// say about the value it chose. Fields init leaves unset, and examples of other forms, are shown
// commented out, rendered by the same rule. Pure: the text comes back, init writes it.

/** Comments wrap here (the project's prettier width is 110; YAML comments stay a little shorter). */
const WIDTH = 100;
const TO_STRING: ToStringOptions = { flowCollectionPadding: false, lineWidth: 0 };

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
  const plan = new Plan();
  const doc = new Document(plan.object(starterFields(input), []));
  doc.commentBefore = commentText([
    `yaml-language-server: $schema=${input.schemaRef}`,
    ...wrap(fieldDescription([]), 0),
    ...wrap(
      `Of ${basename(input.dir)}, written by \`reconcile-conformance init\`. What init guessed is a start; read each comment and adjust. Paths are relative to this file. A field shown commented out is not set: uncomment it to set it.`,
      0,
    ),
  ]);
  if (isMap(doc.contents)) new Commenter(plan, new Set()).map(doc.contents, [], 0);
  return doc.toString(TO_STRING);
}

// ---------------------------------------------------------------- what the starter holds

/** A field of the starter, in the order written: set, or shown commented out. */
interface Field {
  readonly key: string;
  /** The value: plain data, or yaml nodes where a style matters (quoted, inline). */
  readonly value?: unknown;
  /** A map written field by field (instead of value). */
  readonly fields?: readonly Field[];
  /** Shown commented out: the field stays unset (its default, or another form than the one set). */
  readonly commentedOut?: boolean;
  /** What init says about the value, after the schema's description. */
  readonly notes?: readonly string[];
  /** A commented-out example after the notes. */
  readonly example?: Example;
}

/** A commented-out example of a field's value (`key: value`) or of its elements (a list, no key). */
interface Example {
  readonly intro: string | undefined;
  readonly key?: string;
  readonly value: unknown;
}

/**
 * operator.env and the variables the operator's code reads. Kubebuilder's
 * webhook switch is set to "false": the kit does not serve admission
 * webhooks yet, and with them on the operator exits at start for want of a
 * serving certificate. The others are shown commented out, each with a
 * placeholder to fill in: no default can be read off the code, and set to ""
 * a variable is not unset (os.LookupEnv tells the two apart). The namespace
 * variable is the kit's to set.
 */
function environmentField(
  reads: OperatorLayout["environment"],
  namespaceVariable: string | undefined,
): Field {
  const own = reads.filter((r) => r.name !== namespaceVariable);
  const webhooks = own.find((r) => r.name === WEBHOOK_SWITCH);
  const others = own.filter((r) => r !== webhooks);
  return {
    key: "env",
    value: webhooks ? { [WEBHOOK_SWITCH]: quoted("false") } : {},
    notes: [
      ...(webhooks
        ? [
            `${WEBHOOK_SWITCH}: read in ${webhooks.file} (${webhooks.how}); "false" switches kubebuilder's webhooks off, which the kit cannot serve yet: the run tests the operator without its admission webhooks.`,
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
              ...(webhooks ? { [WEBHOOK_SWITCH]: quoted("false") } : {}),
              ...Object.fromEntries(others.map((r) => [r.name, quoted("<value>")])),
            },
          },
        }
      : {}),
  };
}

/** kubebuilder's main.go runs the webhooks unless this is "false". */
const WEBHOOK_SWITCH = "ENABLE_WEBHOOKS";

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
  const { command, namespaced, crds, sample, others, updates, readiness } = layout;

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
        environmentField(layout.environment, "env" in namespaced ? namespaced.env : undefined),
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
          ],
        },
    { key: "generatedUpdates", value: defaults.generatedUpdates },
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

/** A string written in double quotes (paths and command words, as the user would quote them). */
function quoted(text: string): Scalar<string> {
  const scalar = new Scalar(text);
  scalar.type = Scalar.QUOTE_DOUBLE;
  return scalar;
}

/** A list written on one line: [a, b]. */
function inline(values: readonly unknown[]): YAMLSeq {
  const seq = new YAMLSeq();
  seq.flow = true;
  seq.items.push(...values);
  return seq;
}

/** A map written on one line: {a: 1, b: 2}. */
function inlineMap(value: Readonly<Record<string, unknown>>): YAMLMap {
  const map = new YAMLMap();
  map.flow = true;
  for (const [key, item] of Object.entries(value)) map.items.push(new Pair(new Scalar(key), item));
  return map;
}

// ---------------------------------------------------------------- comments

/** The fields' annotations by path, and the commented-out fields each written one follows. */
class Plan {
  /** The written fields, by path. */
  readonly fields = new Map<string, Field>();
  /** The commented-out fields shown before a written field, by the written field's path. */
  readonly before = new Map<string, Field[]>();
  /** The commented-out fields shown after a map's last written field, by the map's path. */
  readonly trailing = new Map<string, Field[]>();

  /** The written fields as an object for `new Document`; the rest is kept for the comments. */
  object(fields: readonly Field[], path: FieldPath): Record<string, unknown> {
    const object: Record<string, unknown> = {};
    let pending: Field[] = [];
    for (const field of fields) {
      const fieldPath = [...path, field.key];
      if (field.commentedOut) {
        pending.push(field);
        continue;
      }
      this.fields.set(pathKey(fieldPath), field);
      this.before.set(pathKey(fieldPath), pending);
      pending = [];
      object[field.key] = field.fields ? this.object(field.fields, fieldPath) : field.value;
    }
    if (pending.length > 0) this.trailing.set(pathKey(path), pending);
    return object;
  }
}

const pathKey = (path: FieldPath) => path.join(".");

/**
 * Sets the comments of a document's nodes: before each field (map key) the
 * schema's description of it, and before a list's first element the
 * description of its elements; each description once in the file. What
 * cannot hold comments (a map or list written inline) gets its fields'
 * descriptions, as "field: description", before it.
 */
class Commenter {
  /**
   * @param plan the starter's fields; undefined in a commented-out part, which has none of its own
   * @param described the paths whose description is given already, shared by the whole file
   */
  constructor(
    private readonly plan: Plan | undefined,
    private readonly described: Set<string>,
  ) {}

  /**
   * The block map `map` at `path`, its keys at `column`. As an element of a
   * list its first key's comment goes before the element (`lead` first),
   * not between the "- " and the key.
   */
  map(map: YAMLMap, path: FieldPath, column: number, lead: readonly string[] = []): void {
    map.items.forEach((pair, index) => {
      if (!isScalar(pair.key) || typeof pair.key.value !== "string") return;
      const fieldPath = [...path, pair.key.value];
      const lines = this.fieldComment(fieldPath, pair.value, column);
      if (index === 0 && lead.length + lines.length > 0 && path.at(-1) === ITEMS) {
        map.commentBefore = commentText([...lead, ...lines]);
      } else if (lines.length > 0) {
        pair.key.commentBefore = commentText(lines);
      }
      this.value(pair.value, fieldPath, column + 2);
    });
    const trailing = this.plan?.trailing.get(pathKey(path)) ?? [];
    const lines = trailing.flatMap((field) => this.commentedOut(field, path, column));
    if (lines.length > 0) map.comment = commentText(lines);
  }

  /** A value under a key whose content starts at `column`: a block map's keys, a block list's dashes. */
  private value(node: unknown, path: FieldPath, column: number): void {
    if (isMap(node) && !node.flow) this.map(node, path, column);
    else if (isSeq(node) && !node.flow) this.seq(node, path, column);
  }

  /** The block list `seq` at `path`, its dashes at `column`. */
  seq(seq: YAMLSeq, path: FieldPath, column: number): void {
    const itemPath = [...path, ITEMS];
    seq.items.forEach((item, index) => {
      const lead = index === 0 ? this.description(itemPath, column) : [];
      if (isMap(item) && !item.flow) {
        this.map(item, itemPath, column + 2, lead);
        return;
      }
      const lines = [...lead, ...this.inlineFields(item, itemPath, column)];
      if (lines.length > 0 && isNode(item)) item.commentBefore = commentText(lines);
    });
  }

  /** The comment before a written field: commented-out fields before it, its description, notes, example. */
  private fieldComment(path: FieldPath, value: unknown, column: number): string[] {
    const field = this.plan?.fields.get(pathKey(path));
    const parent = path.slice(0, -1);
    return [
      ...(this.plan?.before.get(pathKey(path)) ?? []).flatMap((f) => this.commentedOut(f, parent, column)),
      ...this.description(path, column),
      ...this.inlineFields(value, path, column),
      ...(field?.notes ?? []).flatMap((note) => wrap(note, column)),
      ...(field?.example ? this.example(field.example, path, column) : []),
    ];
  }

  /** A field shown commented out: its description and notes, then `key: value` as comment lines. */
  private commentedOut(field: Field, parent: FieldPath, column: number): string[] {
    const path = [...parent, field.key];
    return [
      ...this.description(path, column),
      ...(field.notes ?? []).flatMap((note) => wrap(note, column)),
      ...this.rendered({ [field.key]: field.value }, parent, column, ""),
    ];
  }

  /** An example, indented under the comment that introduces it. */
  private example(example: Example, path: FieldPath, column: number): string[] {
    const indent = "  ";
    const value = example.key === undefined ? example.value : { [example.key]: example.value };
    const base = example.key === undefined ? path : path.slice(0, -1);
    return [...wrap(example.intro, column), ...this.rendered(value, base, column, indent)];
  }

  /** `value` (a document's content at `path`) as YAML lines, with its own comments, for a comment at `column`. */
  private rendered(value: unknown, path: FieldPath, column: number, indent: string): string[] {
    const doc = new Document(value);
    // Its content starts after "# " and the indent; its fields are its own, not the starter's.
    const start = column + 2 + indent.length;
    const commenter = new Commenter(undefined, this.described);
    if (isMap(doc.contents)) commenter.map(doc.contents, path, start);
    else if (isSeq(doc.contents)) commenter.seq(doc.contents, path, start);
    return doc
      .toString(TO_STRING)
      .trimEnd()
      .split("\n")
      .map((line) => `${indent}${line}`);
  }

  /**
   * What an inline collection (or an empty one) holds, described as it
   * cannot carry comments inside: its elements' description, and
   * "field: description" for each field of an inline map.
   */
  private inlineFields(node: unknown, path: FieldPath, column: number): string[] {
    if (isSeq(node) && (node.flow || node.items.length === 0)) {
      const items = [...path, ITEMS];
      return [
        ...this.description(items, column),
        ...node.items.flatMap((item) => this.inlineFields(item, items, column)),
      ];
    }
    if (isMap(node) && (node.flow || node.items.length === 0)) {
      return node.items.flatMap((pair) =>
        isPair(pair) && isScalar(pair.key) && typeof pair.key.value === "string"
          ? this.description([...path, pair.key.value], column, `${pair.key.value}: `)
          : [],
      );
    }
    return [];
  }

  /**
   * The schema's description of the field at `path`, and those of its
   * forms that have no fields of their own (an enum's meaning), wrapped
   * at `column`; nothing when already given once.
   */
  private description(path: FieldPath, column: number, label = ""): string[] {
    const key = pathKey(path);
    if (this.described.has(key)) return [];
    this.described.add(key);
    const texts = [
      fieldDescription(path),
      ...fieldVariants(path)
        .filter((v) => v.fields.length === 0)
        .map((v) => v.description),
    ].filter((t): t is string => t !== undefined);
    return texts.flatMap((text, i) => wrap(i === 0 ? `${label}${text}` : text, column));
  }
}

/** Comment lines as a yaml comment: each line after "#" and a space. */
function commentText(lines: readonly string[]): string {
  return lines.map((line) => ` ${line}`).join("\n");
}

/** Text in lines that end by WIDTH with "# " before them at `column`; nothing for undefined. */
function wrap(text: string | undefined, column: number): string[] {
  if (text === undefined) return [];
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== "" && column + 2 + line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  if (line !== "") lines.push(line);
  return lines;
}
