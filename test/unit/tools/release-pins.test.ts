import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { PINNED_RELEASES } from "../../../src/tools/release-pins.js";

describe("PINNED_RELEASES", () => {
  it("are the releases hack/kube-binaries/build.sh builds", async () => {
    const goMod = (module: string) =>
      readFile(new URL(`../../../hack/kube-binaries/${module}/go.mod`, import.meta.url), "utf8");
    const required = (text: string, path: string) =>
      new RegExp(`^\\s*(?:require\\s+)?${path.replaceAll(".", "\\.")} (v\\S+)`, "m").exec(text)?.[1];
    expect({
      kubeVersion: required(await goMod("kubernetes"), "k8s.io/kubernetes"),
      etcdVersion: required(await goMod("etcd"), "go.etcd.io/etcd/server/v3"),
      kwokVersion: required(await goMod("kwok"), "sigs.k8s.io/kwok"),
    }).toEqual(PINNED_RELEASES);
  });
});
