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
import { fieldDescription, fieldVariants, ITEMS, type FieldPath } from "./contract-descriptions.js";

// How the starter contract is written (starter-contract.ts says what it holds): a yaml Document of
// fields, each preceded by the contract schema's description of it (contract-descriptions.ts) and
// by what init has to say about its value; fields left unset, and examples of other forms, shown
// commented out by the same rule. Pure.

/** Comments wrap here (the project's prettier width is 110; YAML comments stay a little shorter). */
const WIDTH = 100;
const TO_STRING: ToStringOptions = { flowCollectionPadding: false, lineWidth: 0 };

/** The starter's text: `fields` as a YAML document, each with its comments, under the `header` lines. */
export function renderStarter(fields: readonly Field[], header: readonly string[]): string {
  const plan = new Plan();
  const doc = new Document(plan.object(fields, []));
  doc.commentBefore = commentText(header);
  if (isMap(doc.contents)) new Commenter(plan, new Set()).map(doc.contents, [], 0);
  return doc.toString(TO_STRING);
}

/** A field of the starter, in the order written: set, or shown commented out. */
export interface Field {
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
export interface Example {
  readonly intro: string | undefined;
  readonly key?: string;
  readonly value: unknown;
}

/** A string written in double quotes (paths and command words, as the user would quote them). */
export function quoted(text: string): Scalar<string> {
  const scalar = new Scalar(text);
  scalar.type = Scalar.QUOTE_DOUBLE;
  return scalar;
}

/** A list written on one line: [a, b]. */
export function inline(values: readonly unknown[]): YAMLSeq {
  const seq = new YAMLSeq();
  seq.flow = true;
  seq.items.push(...values);
  return seq;
}

/** A map written on one line: {a: 1, b: 2}. */
export function inlineMap(value: Readonly<Record<string, unknown>>): YAMLMap {
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
export function commentText(lines: readonly string[]): string {
  return lines.map((line) => ` ${line}`).join("\n");
}

/** Text in lines that end by WIDTH with "# " before them at `column`; nothing for undefined. */
export function wrap(text: string | undefined, column: number): string[] {
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
