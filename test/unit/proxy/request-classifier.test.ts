import { describe, expect, it } from "vitest";
import {
  classifyRequest,
  describeRequest,
  isMutating,
  type Verb,
} from "../../../src/proxy/request-classifier.js";

describe("classifyRequest", () => {
  it.each([
    [
      "GET",
      "/api/v1/namespaces/ns/configmaps/cm",
      undefined,
      { verb: "get", group: "", version: "v1", resource: "configmaps", namespace: "ns", name: "cm" },
    ],
    [
      "GET",
      "/api/v1/namespaces/ns/configmaps?limit=500",
      undefined,
      { verb: "list", resource: "configmaps", namespace: "ns" },
    ],
    [
      "GET",
      "/api/v1/configmaps?watch=true&resourceVersion=10",
      undefined,
      { verb: "watch", resource: "configmaps" },
    ],
    [
      "GET",
      "/api/v1/namespaces/ns/pods?watch=1",
      undefined,
      { verb: "watch", resource: "pods", namespace: "ns" },
    ],
    [
      "GET",
      "/api/v1/watch/namespaces/ns/services",
      undefined,
      { verb: "watch", resource: "services", namespace: "ns" },
    ],
    [
      "GET",
      "/apis/apps/v1/namespaces/ns/deployments/web",
      undefined,
      { verb: "get", group: "apps", version: "v1", resource: "deployments", name: "web" },
    ],
    [
      "GET",
      "/apis/demo.reconcile-conformance.dev/v1alpha1/webapps?allowWatchBookmarks=true&watch=true",
      undefined,
      { verb: "watch", group: "demo.reconcile-conformance.dev", resource: "webapps" },
    ],
    [
      "POST",
      "/apis/apps/v1/namespaces/ns/deployments?fieldManager=m",
      "application/json",
      { verb: "create", resource: "deployments", namespace: "ns" },
    ],
    [
      "PUT",
      "/apis/demo.reconcile-conformance.dev/v1alpha1/namespaces/ns/webapps/hello/status",
      "application/json",
      { verb: "update", resource: "webapps", name: "hello", subresource: "status" },
    ],
    [
      "PUT",
      "/apis/apps/v1/namespaces/ns/deployments/web/scale",
      "application/json",
      { verb: "update", resource: "deployments", subresource: "scale" },
    ],
    [
      "PATCH",
      "/api/v1/namespaces/ns/services/web",
      "application/merge-patch+json",
      { verb: "patch", patchType: "merge", name: "web" },
    ],
    [
      "PATCH",
      "/api/v1/namespaces/ns/services/web",
      "application/strategic-merge-patch+json; charset=utf-8",
      { verb: "patch", patchType: "strategic" },
    ],
    [
      "PATCH",
      "/api/v1/namespaces/ns/services/web?fieldManager=x&force=true",
      "application/apply-patch+yaml",
      { verb: "patch", patchType: "apply" },
    ],
    [
      "PATCH",
      "/api/v1/namespaces/ns/services/web",
      "application/json-patch+json",
      { verb: "patch", patchType: "json" },
    ],
    ["DELETE", "/api/v1/namespaces/ns/configmaps/cm", undefined, { verb: "delete", name: "cm" }],
    [
      "DELETE",
      "/api/v1/namespaces/ns/configmaps?labelSelector=a%3Db",
      undefined,
      { verb: "deletecollection", resource: "configmaps" },
    ],
    ["GET", "/api/v1/namespaces/ns", undefined, { verb: "get", resource: "namespaces", name: "ns" }],
    ["DELETE", "/api/v1/namespaces/ns", undefined, { verb: "delete", resource: "namespaces", name: "ns" }],
    ["GET", "/api/v1/nodes/node-1", undefined, { verb: "get", resource: "nodes", name: "node-1" }],
    [
      "PUT",
      "/api/v1/namespaces/ns/status",
      "application/json",
      { verb: "update", resource: "namespaces", name: "ns", subresource: "status" },
    ],
    [
      "PUT",
      "/api/v1/namespaces/ns/finalize",
      "application/json",
      { verb: "update", resource: "namespaces", name: "ns", subresource: "finalize" },
    ],
    [
      "GET",
      "/api/v1/namespaces/ns/secrets",
      undefined,
      { verb: "list", resource: "secrets", namespace: "ns" },
    ],
    [
      "PUT",
      "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/op",
      "application/vnd.kubernetes.protobuf",
      { verb: "update", group: "coordination.k8s.io", resource: "leases" },
    ],
    [
      "POST",
      "/api/v1/namespaces/ns/pods/p/eviction",
      "application/json",
      { verb: "create", resource: "pods", subresource: "eviction" },
    ],
    ["GET", "/api/v1/namespaces/ns/pods/p/log", undefined, { verb: "get", subresource: "log" }],
    [
      "POST",
      "/api/v1/namespaces/ns/pods/p/exec?command=ls",
      undefined,
      { verb: "connect", subresource: "exec" },
    ],
    [
      "GET",
      "/api/v1/namespaces/ns/services/web/proxy/healthz",
      undefined,
      { verb: "proxy", subresource: "proxy" },
    ],
    ["GET", "/apis/apps/v1", undefined, { verb: "nonresource", group: "apps", version: "v1", resource: "" }],
    ["GET", "/readyz?verbose", undefined, { verb: "nonresource", path: "/readyz" }],
    ["GET", "/version", undefined, { verb: "nonresource", path: "/version" }],
    ["GET", "/api", undefined, { verb: "nonresource" }],
  ])("%s %s", (method, url, contentType, expected) => {
    expect(classifyRequest(method, url, contentType)).toMatchObject(expected);
  });

  it("has no namespace or name on cluster-wide collections", () => {
    const info = classifyRequest("GET", "/apis/apps/v1/deployments");
    expect(info.namespace).toBeUndefined();
    expect(info.name).toBeUndefined();
    expect(info.subresource).toBeUndefined();
  });

  it("counts only state-changing verbs as writes", () => {
    const writes: Verb[] = ["create", "update", "patch", "delete", "deletecollection"];
    const reads: Verb[] = ["get", "list", "watch", "proxy", "connect", "nonresource"];
    expect(writes.every(isMutating)).toBe(true);
    expect(reads.some(isMutating)).toBe(false);
  });

  it("describes a request for messages", () => {
    expect(
      describeRequest(classifyRequest("PUT", "/apis/apps/v1/namespaces/ns/deployments/web/status")),
    ).toBe("update deployments.apps/web/status -n ns");
  });
});
