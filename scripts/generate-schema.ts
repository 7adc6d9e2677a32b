/**
 * Writes, from the contract schema in src/contract/contract-schema.ts (the
 * one source): schema/reconcile-conformance.schema.json, and the contract
 * reference docs/contract.md. `npm run schema`; a unit test fails when a
 * committed file differs from what this writes.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { contractJsonSchema } from "../src/contract/contract-schema.js";

const root = join(import.meta.dirname, "..");
export const SCHEMA_FILE = join(root, "schema", "reconcile-conformance.schema.json");
export const REFERENCE_FILE = join(root, "docs", "contract.md");

export function renderSchema(): string {
  return `${JSON.stringify(contractJsonSchema(), null, 2)}\n`;
}

interface JsonSchema {
  readonly type?: string;
  readonly description?: string;
  readonly default?: unknown;
  readonly enum?: readonly unknown[];
  readonly pattern?: string;
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly items?: JsonSchema;
  readonly anyOf?: readonly JsonSchema[];
  readonly additionalProperties?: JsonSchema | boolean;
}

/** The contract's fields as a Markdown table: path, type, required or default, meaning. */
export function renderContractReference(): string {
  const rows: string[] = [];
  const visit = (schema: JsonSchema, path: string, required: boolean) => {
    if (path !== "" && path !== "$schema") {
      const needs = required
        ? "**required**"
        : schema.default === undefined
          ? "optional"
          : `\`${JSON.stringify(schema.default)}\``;
      rows.push(`| \`${path}\` | ${typeOf(schema)} | ${needs} | ${cell(schema.description ?? "")} |`);
    }
    const objects = [schema, ...(schema.anyOf ?? [])].filter((s) => s.properties);
    for (const object of objects) {
      for (const [name, child] of Object.entries(object.properties ?? {})) {
        visit(child, path === "" ? name : `${path}.${name}`, object.required?.includes(name) ?? false);
      }
    }
    const item = schema.items;
    if (item?.properties) visit({ ...item, description: undefined }, `${path}[]`, false);
  };
  visit(contractJsonSchema(), "", true);
  return [
    "# The contract file: reference",
    "",
    "<!-- Generated from src/contract/contract-schema.ts by `npm run schema`; do not edit. -->",
    "",
    "`reconcile-conformance.yaml`, in the operator's repository. Paths are relative to the file;",
    "durations are written `1.5s`, `500ms` or `2m`. The same definition is published as a JSON Schema,",
    "`schema/reconcile-conformance.schema.json`, for editors (first line:",
    "`# yaml-language-server: $schema=<path or URL of the schema>`). `reconcile-conformance init`",
    "writes a starter file with a comment on every field. What `promises` and `waivers` mean to each",
    "check, with examples: [promises-and-waivers.md](promises-and-waivers.md).",
    "",
    "| field | type | required / default | meaning |",
    "| --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
}

function typeOf(schema: JsonSchema): string {
  if (schema.enum) return schema.enum.map((v) => `\`${JSON.stringify(v)}\``).join(" \\| ");
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(" \\| ");
  if (schema.type === "array") return `list of ${schema.items ? typeOf(schema.items) : "any"}`;
  if (schema.type === "object" && !schema.properties && schema.additionalProperties) {
    return "map";
  }
  return schema.type ?? "any";
}

/** Text as one Markdown table cell: pipes, emphasis marks and angle brackets taken literally. */
function cell(text: string): string {
  return text
    .replace(/\s*\n\s*/g, " ")
    .replace(/([|*_\\`])/g, "\\$1")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;");
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  for (const [file, text] of [
    [SCHEMA_FILE, renderSchema()],
    [REFERENCE_FILE, renderContractReference()],
  ] as const) {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
    console.log(`wrote ${file}`);
  }
}
