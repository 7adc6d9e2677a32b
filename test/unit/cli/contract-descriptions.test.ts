import { describe, expect, it } from "vitest";
import { fieldDescription, fieldVariants, ITEMS } from "../../../src/cli/contract-descriptions.js";
import { contractJsonSchema } from "../../../src/contract/contract-schema.js";
import { asRecord } from "../../../src/util/records.js";

/** The JSON Schema node at a chain of property names (no anyOf), read independently. */
function jsonSchemaAt(...names: string[]): unknown {
  let node: unknown = contractJsonSchema();
  for (const name of names) node = asRecord(asRecord(node).properties)[name];
  return node;
}
const describedAs = (...names: string[]) => asRecord(jsonSchemaAt(...names)).description;
/** The description of one of readiness's forms: a name, or { cel }. */
function readinessForm(index: number): unknown {
  const forms = asRecord(jsonSchemaAt("readiness")).anyOf;
  return Array.isArray(forms) ? asRecord(forms[index]).description : undefined;
}

describe("fieldDescription", () => {
  it.each<[string, readonly string[], unknown]>([
    ["the contract", [], describedAs()],
    ["a top-level field", ["crds"], describedAs("crds")],
    ["a nested field", ["operator", "namespaced", "arg"], describedAs("operator", "namespaced", "arg")],
    ["a list's elements", ["crds", ITEMS], "a CRD manifest, relative to the contract file"],
    [
      "a field of a list's elements",
      ["waivers", ITEMS, "until"],
      "The last day (UTC) the waiver holds; after it the run fails and names it.",
    ],
    [
      "a field of one form of a union",
      ["readiness", "cel"],
      expect.stringMatching(/^A CEL expression over the custom resource/),
    ],
    ["a field without a description", ["operator", "deploy", "deployment", "name"], undefined],
    ["no such field", ["operator", "nope"], undefined],
    ["below a leaf", ["sample", "x"], undefined],
  ])("%s", (_name, path, expected) => {
    expect(fieldDescription(path)).toEqual(expected);
  });

  it("says what the schema says, with no text of its own", () => {
    expect(fieldDescription(["operator", "startTimeout"])).toBe(describedAs("operator", "startTimeout"));
    expect(fieldDescription(["operator", "startTimeout"])).toMatch(/\(default 60s\)$/);
    expect(readinessForm(0)).toMatch(/^"conditions": /);
  });
});

describe("fieldVariants", () => {
  it.each<[string, readonly string[], unknown]>([
    [
      "readiness: a name or a CEL expression",
      ["readiness"],
      [
        { description: readinessForm(0), fields: [] },
        { description: "Ready when this CEL expression is true.", fields: ["cel"] },
      ],
    ],
    [
      "deploy.manifests: undescribed forms",
      ["operator", "deploy", "manifests"],
      [
        { description: undefined, fields: [] },
        { description: undefined, fields: [] },
      ],
    ],
    ["a field of one form", ["sample"], []],
    ["no such field", ["nope"], []],
  ])("%s", (_name, path, expected) => {
    expect(fieldVariants(path)).toEqual(expected);
  });
});
