import { contractJsonSchema } from "../contract/contract-schema.js";
import { asRecord, isRecord } from "../util/records.js";

// The contract schema's own words for its fields (zod's .describe(), as the published JSON Schema
// carries them, and as scripts/generate-schema.ts writes them into docs/contract.md), looked up by
// field path, so that the starter contract's comments say what the schema says.

/** A field path: property names, and ITEMS for "an element of this list". */
export type FieldPath = readonly string[];
/** The path segment for the elements of a list: `["crds", ITEMS]` is one CRD manifest. */
export const ITEMS = "[]";

/** One of the forms a field may take (a JSON Schema anyOf branch): its description and its fields. */
export interface FieldVariant {
  readonly description: string | undefined;
  readonly fields: readonly string[];
}

let schema: Record<string, unknown> | undefined;

function schemaAt(path: FieldPath): Record<string, unknown> | undefined {
  schema ??= contractJsonSchema();
  let node: Record<string, unknown> | undefined = schema;
  for (const segment of path) {
    if (node === undefined) return undefined;
    node = segment === ITEMS ? itemsOf(node) : propertyOf(node, segment);
  }
  return node;
}

function itemsOf(node: Record<string, unknown>): Record<string, unknown> | undefined {
  return isRecord(node.items) ? node.items : undefined;
}

/** A property of an object schema, or of the first anyOf branch that has it. */
function propertyOf(node: Record<string, unknown>, name: string): Record<string, unknown> | undefined {
  for (const branch of [node, ...branchesOf(node)]) {
    const property = asRecord(branch.properties)[name];
    if (isRecord(property)) return property;
  }
  return undefined;
}

function branchesOf(node: Record<string, unknown>): Record<string, unknown>[] {
  return Array.isArray(node.anyOf) ? node.anyOf.filter(isRecord) : [];
}

/** The schema's description of the field at `path`; undefined when it has none or there is no such field. */
export function fieldDescription(path: FieldPath): string | undefined {
  const description = schemaAt(path)?.description;
  return typeof description === "string" ? description : undefined;
}

/** The forms the field at `path` may take (none when it has one form only), each with its description. */
export function fieldVariants(path: FieldPath): readonly FieldVariant[] {
  const node = schemaAt(path);
  return (node ? branchesOf(node) : []).map((branch) => ({
    description: typeof branch.description === "string" ? branch.description : undefined,
    fields: Object.keys(asRecord(branch.properties)),
  }));
}
