import { describe, expect, it } from "vitest";
import { operatorFinalizers } from "../../../src/scenario/deletion.js";

const withFinalizers = (finalizers: string[]) => ({
  apiVersion: "example.com/v1",
  kind: "Broker",
  metadata: { name: "b", finalizers },
});

describe("operatorFinalizers", () => {
  it.each([
    ["a domain-qualified name", ["example.com/cleanup"], ["example.com/cleanup"]],
    [
      "a dot-qualified name, as some scaffolds write it",
      ["deletion.finalizers.brokers.example.com"],
      ["deletion.finalizers.brokers.example.com"],
    ],
    ["a bare word", ["cleanup"], ["cleanup"]],
    ["not the API server's own", ["foregroundDeletion", "orphan"], []],
    ["not Kubernetes'", ["kubernetes.io/pvc-protection", "service.kubernetes.io/load-balancer-cleanup"], []],
    [
      "the operator's beside the API server's",
      ["foregroundDeletion", "example.com/cleanup"],
      ["example.com/cleanup"],
    ],
  ])("takes %s", (_name, finalizers, expected) => {
    expect(operatorFinalizers(withFinalizers(finalizers))).toEqual(expected);
  });

  it("leaves out a finalizer the sample already carried: the kit's, not the operator's", () => {
    expect(
      operatorFinalizers(
        withFinalizers(["example.com/keep", "example.com/cleanup"]),
        withFinalizers(["example.com/keep"]),
      ),
    ).toEqual(["example.com/cleanup"]);
  });
});
