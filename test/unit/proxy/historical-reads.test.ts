import { describe, expect, it } from "vitest";
import { HistoricalReads, historicalFailures, watchErrorText } from "../../../src/proxy/historical-reads.js";
import { classifyRequest } from "../../../src/proxy/request-classifier.js";

function route(reads: HistoricalReads, url: string, run = 2) {
  return reads.route(classifyRequest("GET", url), url, run);
}

describe("historical reads", () => {
  it("leaves the runs before the restart, single objects and subresources alone", () => {
    const reads = new HistoricalReads({ resourceVersion: "100", fromRun: 2 });
    expect(route(reads, "/api/v1/namespaces/a/services?limit=500", 1)).toEqual({ kind: "pass" });
    expect(route(reads, "/api/v1/namespaces/a/services/web")).toEqual({ kind: "pass" });
    expect(route(reads, "/apis/apps/v1/namespaces/a/deployments/web/status")).toEqual({ kind: "pass" });
    expect(reads.proof()).toEqual({ resourceVersion: "100", refusedWatchLists: 0, lists: [], watches: [] });
  });

  it("refuses every watch-list, rewrites the first list of each scope to the past, and follows the watch from there", () => {
    const reads = new HistoricalReads({ resourceVersion: "100", fromRun: 2 });
    const watchList =
      "/api/v1/namespaces/a/services?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true";
    expect(route(reads, watchList)).toMatchObject({ kind: "refuse-watch-list" });
    const first = route(reads, "/api/v1/namespaces/a/services?limit=500&resourceVersion=0");
    expect(first).toMatchObject({
      kind: "list-from-past",
      path: "/api/v1/namespaces/a/services?resourceVersion=100&resourceVersionMatch=Exact",
    });
    // Another namespace is another reflector's scope: its first list is rewritten too.
    expect(route(reads, "/api/v1/namespaces/b/services?limit=500&resourceVersion=0")).toMatchObject({
      kind: "list-from-past",
    });
    // A relist, the watch from the present, and a later watch-list attempt.
    expect(route(reads, "/api/v1/namespaces/a/services?limit=500&resourceVersion=0")).toEqual({
      kind: "pass",
    });
    expect(route(reads, "/api/v1/namespaces/a/services?watch=true&resourceVersion=150")).toEqual({
      kind: "pass",
    });
    expect(route(reads, watchList)).toMatchObject({ kind: "refuse-watch-list" });
    const watch = route(
      reads,
      "/api/v1/namespaces/a/services?allowWatchBookmarks=true&resourceVersion=100&watch=true",
    );
    expect(watch).toMatchObject({ kind: "watch-from-past" });
    if (first.kind === "list-from-past") first.list.code = 200;
    if (watch.kind === "watch-from-past") {
      watch.watch.code = 200;
      watch.watch.error = "410: too old resource version: 100 (180)";
    }
    const proof = reads.proof();
    expect(proof).toMatchObject({
      refusedWatchLists: 2,
      lists: [
        {
          resource: "services",
          namespace: "a",
          asked: "limit=500&resourceVersion=0",
          servedFrom: "100",
          code: 200,
        },
        { resource: "services", namespace: "b", servedFrom: "100" },
      ],
      watches: [{ resource: "services", namespace: "a", code: 200 }],
    });
    expect(historicalFailures(proof)).toEqual([
      "the watch of services from resourceVersion 100 ended in an ERROR event: 410: too old resource version: 100 (180)",
    ]);
  });

  it("names a refused list with the server's words", () => {
    const reads = new HistoricalReads({ resourceVersion: "7", fromRun: 0 });
    const list = route(reads, "/apis/apps/v1/deployments", 0);
    if (list.kind !== "list-from-past") throw new Error(`not rewritten: ${list.kind}`);
    list.list.code = 410;
    list.list.refusal = "The resourceVersion for the provided list is too old.";
    expect(historicalFailures(reads.proof())).toEqual([
      "the list of deployments at resourceVersion 7 was refused (410): The resourceVersion for the provided list is too old.",
    ]);
  });

  it("reads an ERROR event's Status when it is JSON", () => {
    const json = Buffer.from(
      `${JSON.stringify({ type: "ERROR", object: { kind: "Status", code: 410, message: "too old resource version: 5 (90)" } })}\n`,
    );
    expect(watchErrorText(json)).toBe("410: too old resource version: 5 (90)");
    expect(watchErrorText(Buffer.from([0, 0, 0, 3, 1, 2, 3]))).toContain("not JSON");
  });
});
