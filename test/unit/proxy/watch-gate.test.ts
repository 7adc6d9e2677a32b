import { describe, expect, it } from "vitest";
import { WatchGate } from "../../../src/proxy/watch-gate.js";
import type { WatchEvent, WatchEventType } from "../../../src/proxy/watch-events.js";

/** A JSON watch frame for an object, as the splitter emits it. */
function event(type: WatchEventType, name: string, resourceVersion: string, uid = `uid-${name}`): WatchEvent {
  const object = { kind: "Service", namespace: "ns", name, uid, resourceVersion };
  const bytes = Buffer.from(
    `${JSON.stringify({ type, object: { metadata: { name, namespace: "ns", uid, resourceVersion } } })}\n`,
  );
  return type === "BOOKMARK" || type === "ERROR" ? { bytes, type } : { bytes, type, object };
}

function gate() {
  const sent: WatchEvent[] = [];
  const g = new WatchGate((e) => sent.push(e));
  const labels = () =>
    sent.map((e) => (e.object ? `${e.type} ${e.object.name}@${e.object.resourceVersion}` : e.type));
  return { g, sent, labels };
}

describe("WatchGate hold", () => {
  it("holds the matched object's events in order, passes the others, then delivers the held ones as they came", () => {
    const { g, sent, labels } = gate();
    g.arm({ id: "h1", mode: "hold", match: { name: "web" } });
    const held = [event("ADDED", "web", "10"), event("MODIFIED", "web", "12")];
    g.pass(held[0] as WatchEvent);
    g.pass(event("MODIFIED", "other", "11"));
    g.pass(held[1] as WatchEvent);
    expect(labels()).toEqual(["MODIFIED other@11"]);
    expect(g.holding).toBe(true);
    const proof = g.release("h1");
    expect(labels()).toEqual(["MODIFIED other@11", "ADDED web@10", "MODIFIED web@12"]);
    // The very frames that came, byte for byte.
    expect(sent.slice(1).map((e) => e.bytes)).toEqual(held.map((e) => e.bytes));
    expect(proof.taken.map((t) => t.resourceVersion)).toEqual(["10", "12"]);
    expect(proof.delivered).toEqual(proof.taken);
    expect(g.holding).toBe(false);
  });

  it("forwards no bookmark while it holds something; once released, the last one withheld, then the rest", () => {
    const { g, sent, labels } = gate();
    g.arm({ id: "h1", mode: "hold", match: { name: "web" } });
    g.pass(event("BOOKMARK", "", "9"));
    g.pass(event("MODIFIED", "web", "10"));
    const last = event("BOOKMARK", "", "13");
    g.pass(event("BOOKMARK", "", "11"));
    g.pass(last);
    expect(labels()).toEqual(["BOOKMARK"]);
    const proof = g.release("h1");
    // The withheld bookmark follows the held events: the reflector's position moves past them again.
    expect(labels()).toEqual(["BOOKMARK", "MODIFIED web@10", "BOOKMARK"]);
    expect(sent.at(-1)).toBe(last);
    g.pass(event("BOOKMARK", "", "14"));
    expect(labels()).toEqual(["BOOKMARK", "MODIFIED web@10", "BOOKMARK", "BOOKMARK"]);
    expect(proof.bookmarksWithheld).toBe(2);
  });

  it("holds nothing of a watch-list stream's initial events, up to the bookmark that ends them", () => {
    const sent: WatchEvent[] = [];
    const g = new WatchGate((e) => sent.push(e), undefined, { sendsInitialEvents: true });
    g.arm({ id: "h", mode: "hold", match: { name: "web" } });
    g.pass(event("ADDED", "web", "10"));
    const end = {
      bytes: Buffer.from(
        '{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"10","annotations":{"k8s.io/initial-events-end":"true"}}}}\n',
      ),
      type: "BOOKMARK" as const,
    };
    g.pass(end);
    g.pass(event("MODIFIED", "web", "11"));
    expect(sent.map((e) => e.type)).toEqual(["ADDED", "BOOKMARK"]);
    expect(g.heldBy("h").map((e) => e.resourceVersion)).toEqual(["11"]);
  });

  it("reports what a cut stream held as taken and never delivered", () => {
    const proofs: unknown[] = [];
    const sent: WatchEvent[] = [];
    const g = new WatchGate(
      (e) => sent.push(e),
      (p) => proofs.push(p),
    );
    g.arm({ id: "h", mode: "hold", match: {} });
    g.pass(event("MODIFIED", "web", "10"));
    g.abandon();
    expect(sent).toEqual([]);
    expect(proofs).toMatchObject([{ id: "h", taken: [{ name: "web" }], delivered: [] }]);
  });

  it("delivers what it holds before bytes it can no longer frame", () => {
    const { g, sent } = gate();
    g.arm({ id: "h", mode: "hold", match: {} });
    const held = event("MODIFIED", "web", "10");
    const raw = { bytes: Buffer.from("unframed") };
    g.pass(held);
    g.pass(raw);
    expect(sent).toEqual([held, raw]);
  });

  it("takes only the event types it names, and keeps an object it holds in order even for other types", () => {
    const { g, labels } = gate();
    g.arm({ id: "d", mode: "hold", match: { types: ["DELETED"] } });
    g.pass(event("MODIFIED", "web", "10"));
    g.pass(event("DELETED", "web", "11"));
    g.pass(event("ADDED", "web", "12", "uid-web-2"));
    expect(labels()).toEqual(["MODIFIED web@10"]);
    g.release("d");
    expect(labels()).toEqual(["MODIFIED web@10", "DELETED web@11", "ADDED web@12"]);
  });

  it("delivers everything held before an ERROR event and before the stream ends", () => {
    const { g, labels } = gate();
    g.arm({ id: "a", mode: "hold", match: { name: "a" } });
    g.arm({ id: "b", mode: "hold", match: { name: "b" } });
    g.pass(event("MODIFIED", "b", "10"));
    g.pass(event("MODIFIED", "a", "11"));
    g.pass(event("ERROR", "", ""));
    expect(labels()).toEqual(["MODIFIED b@10", "MODIFIED a@11", "ERROR"]);

    const second = gate();
    second.g.arm({ id: "a", mode: "hold", match: { name: "a" } });
    second.g.pass(event("MODIFIED", "a", "20"));
    const proofs = second.g.end();
    expect(second.labels()).toEqual(["MODIFIED a@20"]);
    expect(proofs.map((p) => [p.id, p.delivered.length])).toEqual([["a", 1]]);
  });

  it("passes unframed bytes and events without an identity untouched", () => {
    const { g, sent } = gate();
    g.arm({ id: "all", mode: "hold", match: {} });
    const raw = { bytes: Buffer.from("\u0000raw") };
    const anonymous = { bytes: Buffer.from("{}\n"), type: "MODIFIED" as const };
    g.pass(raw);
    g.pass(anonymous);
    expect(sent).toEqual([raw, anonymous]);
  });

  it("refuses to arm a fault twice or release one it does not have", () => {
    const { g } = gate();
    g.arm({ id: "x", mode: "hold", match: {} });
    expect(() => g.arm({ id: "x", mode: "hold", match: {} })).toThrow("armed already");
    expect(() => g.release("y")).toThrow("not armed");
  });
});

describe("WatchGate coalesce", () => {
  it("delivers each object's last state, objects in the order first seen", () => {
    const { g, labels } = gate();
    g.arm({ id: "c", mode: "coalesce", match: {} });
    g.pass(event("MODIFIED", "web", "10"));
    g.pass(event("MODIFIED", "db", "11"));
    g.pass(event("MODIFIED", "web", "12"));
    g.pass(event("MODIFIED", "web", "13"));
    const proof = g.release("c");
    expect(labels()).toEqual(["MODIFIED web@13", "MODIFIED db@11"]);
    expect(proof.taken).toHaveLength(4);
    expect(proof.delivered.map((d) => `${d.name}@${d.resourceVersion}`)).toEqual(["web@13", "db@11"]);
  });

  it("delivers nothing of an object added and deleted within the window, but always a deletion of one it knew", () => {
    const { g, labels } = gate();
    g.arm({ id: "c", mode: "coalesce", match: {} });
    g.pass(event("ADDED", "brief", "10"));
    g.pass(event("MODIFIED", "brief", "11"));
    g.pass(event("DELETED", "brief", "12"));
    g.pass(event("MODIFIED", "known", "13"));
    g.pass(event("DELETED", "known", "14"));
    g.release("c");
    expect(labels()).toEqual(["DELETED known@14"]);
  });

  it("delivers a delete and recreate under the same name as the old life's deletion, then the new life", () => {
    const { g, labels } = gate();
    g.arm({ id: "c", mode: "coalesce", match: { name: "web" } });
    g.pass(event("MODIFIED", "web", "10", "old"));
    g.pass(event("DELETED", "web", "11", "old"));
    g.pass(event("ADDED", "web", "12", "new"));
    g.pass(event("MODIFIED", "web", "13", "new"));
    const proof = g.release("c");
    expect(labels()).toEqual(["DELETED web@11", "MODIFIED web@13"]);
    expect(proof.delivered.map((d) => d.uid)).toEqual(["old", "new"]);
  });
});
