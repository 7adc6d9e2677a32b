/**
 * Writes schema/reconcile-conformance.schema.json from the contract schema
 * in src/contract/contract-schema.ts (the one source). `npm run schema`;
 * a unit test fails when the committed file differs from what this writes.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { contractJsonSchema } from "../src/contract/contract-schema.js";

export const SCHEMA_FILE = join(import.meta.dirname, "..", "schema", "reconcile-conformance.schema.json");

export function renderSchema(): string {
  return `${JSON.stringify(contractJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  await mkdir(join(import.meta.dirname, "..", "schema"), { recursive: true });
  await writeFile(SCHEMA_FILE, renderSchema());
  console.log(`wrote ${SCHEMA_FILE}`);
}
