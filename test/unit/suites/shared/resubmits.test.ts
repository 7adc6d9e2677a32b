import { describe, expect, it } from "vitest";
import type { DeliveredEvent } from "../../../../src/proxy/read-log.js";
import { judgeResubmits } from "../../../../src/suites/shared/resubmits.js";
import { writeEntry } from "../../../support/write-entry.js";

const write = writeEntry;

const concurrent = write({ seq: 10, actor: "kit", verb: "patch", resourceVersion: "105" });
const conflicted = write({ seq: 11, sentResourceVersion: "100", code: 409, effect: "rejected" });
const resend = (seq: number) => write({ seq, sentResourceVersion: "100", code: 409, effect: "rejected" });
const event = (beforeWriteSeq: number, resourceVersion = "105"): DeliveredEvent => ({
  type: "MODIFIED",
  group: "apps",
  resource: "deployments",
  namespace: "ns",
  name: "web",
  resourceVersion,
  beforeWriteSeq,
});

describe("judgeResubmits", () => {
  it("blames a resend of the conflicted resourceVersion made after the watch delivered the concurrent change", () => {
    const result = judgeResubmits({
      conflicted,
      concurrent,
      later: [resend(12), resend(14), write({ seq: 15, sentResourceVersion: "105" })],
      delivered: [event(13)],
      watchesKind: true,
    });
    expect(result.excused.map((w) => w.seq)).toEqual([12]); // its cache had not seen it yet
    expect(result.blamed.map((w) => w.seq)).toEqual([14]);
  });

  it("excuses every resend while the watch has not delivered the concurrent change (cache lag)", () => {
    const result = judgeResubmits({
      conflicted,
      concurrent,
      later: [resend(12), resend(13)],
      delivered: [event(1, "100"), event(2, "99")],
      watchesKind: true,
    });
    expect(result).toEqual({ blamed: [], excused: [resend(12), resend(13)] });
  });

  it("blames every resend of an operator that does not watch the kind (no cache to wait for)", () => {
    const result = judgeResubmits({
      conflicted,
      concurrent,
      later: [resend(12)],
      delivered: [],
      watchesKind: false,
    });
    expect(result.blamed.map((w) => w.seq)).toEqual([12]);
  });

  it("has nothing to judge when the raced write did not conflict, or for other objects and resourceVersions", () => {
    expect(
      judgeResubmits({
        conflicted: write({ seq: 11, code: 200 }),
        concurrent,
        later: [resend(12)],
        delivered: [],
        watchesKind: false,
      }),
    ).toEqual({ blamed: [], excused: [] });
    const other = write({ seq: 12, name: "other", sentResourceVersion: "100" });
    const status = write({ seq: 13, subresource: "status", sentResourceVersion: "100" });
    expect(
      judgeResubmits({ conflicted, concurrent, later: [other, status], delivered: [], watchesKind: false }),
    ).toEqual({ blamed: [], excused: [] });
  });
});
