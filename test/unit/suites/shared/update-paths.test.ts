import { describe, expect, it } from "vitest";
import { loadContract } from "../../../../src/contract/load-contract.js";
import type { SpecReference } from "../../../../src/scenario/spec-references.js";
import { crashLines } from "../../../../src/suites/shared/crash-lines.js";
import {
  chosenLines,
  faultedSpecs,
  kindOfWrite,
  pathOfReference,
  sweepsGeneratedUpdates,
} from "../../../../src/suites/shared/update-paths.js";
import { writeEntry } from "../../../support/write-entry.js";

const contract = await loadContract("examples/webapp-operator/reconcile-conformance.yaml");
const generated = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    patch: { spec: { port: 9091 + i } },
    description: `g${i}`,
    field: "spec.port",
  }));

describe("faultedSpecs", () => {
  it("takes every update of the contract's, then the budget's first generated ones", () => {
    expect(contract.updates).toHaveLength(2);
    expect(faultedSpecs(contract)).toEqual([1, 2]);
    expect(faultedSpecs({ ...contract, generatedUpdates: generated(5) })).toEqual([1, 2, 3]);
    expect(
      faultedSpecs({
        ...contract,
        generatedUpdates: generated(5),
        updateFaults: { lines: "all", generatedUpdates: 0 },
      }),
    ).toEqual([1, 2]);
    expect(
      faultedSpecs({
        ...contract,
        generatedUpdates: generated(1),
        updateFaults: { lines: "all", generatedUpdates: 9 },
      }),
    ).toEqual([1, 2, 3]);
  });

  it("takes none when the lines are none", () => {
    const none = {
      ...contract,
      generatedUpdates: generated(3),
      updateFaults: { lines: "none" as const, generatedUpdates: 2 },
    };
    expect(faultedSpecs(none)).toEqual([]);
    expect(sweepsGeneratedUpdates(none)).toBe(false);
    expect(sweepsGeneratedUpdates(contract)).toBe(true);
  });
});

const reference = (fields: Partial<SpecReference>): SpecReference => ({
  spec: 2,
  namespace: "ref",
  customResource: {},
  children: [],
  writes: [],
  specWrites: [
    { spec: 0, seq: 1 },
    { spec: 1, seq: 10 },
    { spec: 2, seq: 20 },
  ],
  ...fields,
});

describe("pathOfReference", () => {
  it("takes the writes after the kit's write of the reference's own spec", () => {
    const writes = [5, 12, 21, 25].map((seq) => writeEntry({ seq }));
    const way = pathOfReference(reference({ writes }), contract);
    if ("none" in way) throw new Error(way.none);
    expect(way.path).toEqual({ spec: 2, name: "update 2" });
    expect(way.writes.map((w) => w.seq)).toEqual([21, 25]);
  });

  it("has none for a generated update the operator did not carry out", () => {
    expect(pathOfReference(reference({ notCarriedOut: { why: "never ready" } }), contract)).toEqual({
      none: "update 2: the operator did not carry it out in its reference (never ready)",
    });
  });
});

describe("chosenLines", () => {
  const writes = [
    writeEntry({ seq: 1, verb: "update", resource: "deployments", group: "apps", name: "a" }),
    writeEntry({ seq: 2, verb: "update", resource: "deployments", group: "apps", name: "b" }),
    writeEntry({
      seq: 3,
      verb: "delete",
      resource: "statefulsets",
      group: "apps",
      name: "db",
      effect: "deleted",
    }),
    writeEntry({
      seq: 4,
      verb: "create",
      resource: "statefulsets",
      group: "apps",
      name: "db",
      effect: "created",
      code: 201,
    }),
    writeEntry({
      seq: 5,
      verb: "update",
      resource: "webapps",
      group: "demo",
      name: "w",
      subresource: "status",
    }),
    writeEntry({ seq: 6, verb: "update", resource: "deployments", group: "apps", name: "a" }),
  ];
  const lines = crashLines({ namespace: "ns", writes }, { ignoreWrites: [], clock: {} });

  it("by kind: the first write of each kind, deletes and creates included, status writes left out", () => {
    expect(chosenLines(lines, "by-kind").map((l) => l.write.seq)).toEqual([1, 3, 4]);
    expect(kindOfWrite(writes[3]!)).toBe("create apps/statefulsets");
    expect(kindOfWrite(writes[4]!)).toBe("update demo/webapps/status");
  });

  it("all of them, or none", () => {
    expect(chosenLines(lines, "all")).toHaveLength(6);
    expect(chosenLines(lines, "none")).toEqual([]);
  });

  it("by kind, passes over a line no scenario can count on for the next of its kind", () => {
    const [first, ...rest] = lines;
    const timed = { ...first!, timing: "the operator's clock made it" };
    expect(chosenLines([timed, ...rest], "by-kind").map((l) => l.write.seq)).toEqual([2, 3, 4]);
  });
});
