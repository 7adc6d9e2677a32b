import { describe, expect, it } from "vitest";
import {
  WatchEventSplitter,
  watchEventStream,
  watchFraming,
  type WatchEvent,
  type WatchEventSplitterOptions,
} from "../../../src/proxy/watch-events.js";
import { bytesField, textField, varintField } from "../../support/protobuf-writer.js";

const JSON_TYPE = "application/json";
const PROTOBUF_TYPE = "application/vnd.kubernetes.protobuf;stream=watch";

/** An object as the embedded protobuf encoder writes it: "k8s\0" + runtime.Unknown{typeMeta, raw}. */
function protobufObject(kind: string, object: Buffer, apiVersion = "v1"): Buffer {
  return Buffer.concat([
    Buffer.from("k8s\0", "latin1"),
    bytesField(1, Buffer.concat([textField(1, apiVersion), textField(2, kind)])),
    bytesField(2, object),
    textField(3, ""), // contentEncoding and contentType: the API server writes them, empty
    textField(4, ""),
  ]);
}
/** A ConfigMap: ObjectMeta in field 1 (name 1, namespace 3, uid 5, resourceVersion 6, generation 7), data in 2. */
function protobufConfigMap(name: string, resourceVersion: string, padding = 0): Buffer {
  const meta = Buffer.concat([
    textField(1, name),
    textField(3, "default"),
    textField(5, `uid-${name}`),
    textField(6, resourceVersion),
    varintField(7, 1),
  ]);
  const data = bytesField(2, Buffer.concat([textField(1, "key"), textField(2, "v".repeat(padding))]));
  return protobufObject("ConfigMap", Buffer.concat([bytesField(1, meta), data]));
}
/** One frame: 4-byte big-endian length, then a raw metav1.WatchEvent{type 1, object 2 = RawExtension{raw 1}}. */
function protobufFrame(type: string, object: Buffer): Buffer {
  const event = Buffer.concat([textField(1, type), bytesField(2, bytesField(1, object))]);
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32BE(event.length);
  return Buffer.concat([prefix, event]);
}

function jsonFrame(type: string, object: Record<string, unknown>): Buffer {
  return Buffer.from(`${JSON.stringify({ type, object })}\n`);
}
const configMap = (name: string, resourceVersion: string, data: Record<string, string> = {}) => ({
  kind: "ConfigMap",
  apiVersion: "v1",
  metadata: { name, namespace: "default", uid: `uid-${name}`, resourceVersion },
  data,
});

const JSON_FRAMES = [
  jsonFrame("ADDED", configMap("a", "10", { greeting: "grüß dich ✓" })), // multi-byte UTF-8 to split
  jsonFrame("MODIFIED", configMap("b", "11", { text: "line\nbreak inside a string" })),
  jsonFrame("BOOKMARK", { kind: "ConfigMap", apiVersion: "v1", metadata: { resourceVersion: "12" } }),
  jsonFrame("DELETED", configMap("a", "13")),
  jsonFrame("ERROR", {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    reason: "Expired",
    code: 410,
  }),
];
const STATUS = protobufObject(
  "Status",
  Buffer.concat([
    bytesField(1, Buffer.alloc(0)),
    textField(2, "Failure"),
    textField(4, "Expired"),
    varintField(6, 410),
  ]),
);
const PROTOBUF_FRAMES = [
  protobufFrame("ADDED", protobufConfigMap("a", "10")),
  protobufFrame("MODIFIED", protobufConfigMap("b", "11", 300)), // frame > 255 bytes: two prefix bytes used
  protobufFrame("DELETED", protobufConfigMap("a", "13")),
  protobufFrame("ERROR", STATUS),
];

interface Framing {
  readonly name: string;
  readonly contentType: string;
  readonly frames: readonly Buffer[];
  readonly types: readonly string[];
}
const FRAMINGS: readonly Framing[] = [
  {
    name: "JSON",
    contentType: JSON_TYPE,
    frames: JSON_FRAMES,
    types: ["ADDED", "MODIFIED", "BOOKMARK", "DELETED", "ERROR"],
  },
  {
    name: "protobuf",
    contentType: PROTOBUF_TYPE,
    frames: PROTOBUF_FRAMES,
    types: ["ADDED", "MODIFIED", "DELETED", "ERROR"],
  },
];

/** Feeds the chunks to a splitter; returns every event and what `end` left. */
function split(
  contentType: string | undefined,
  chunks: readonly Buffer[],
  options?: WatchEventSplitterOptions,
) {
  const splitter = new WatchEventSplitter(contentType, options);
  const events: WatchEvent[] = [];
  for (const chunk of chunks) events.push(...splitter.push(chunk));
  const rest = splitter.end();
  const output = Buffer.concat([...events.map((e) => e.bytes), rest]);
  return { events, rest, output, typed: events.filter((e) => e.type !== undefined) };
}

/** Cuts `bytes` at the given offsets. */
function cut(bytes: Buffer, offsets: readonly number[]): Buffer[] {
  const chunks: Buffer[] = [];
  let start = 0;
  for (const offset of [...offsets, bytes.length]) {
    chunks.push(bytes.subarray(start, offset));
    start = offset;
  }
  return chunks;
}

/** A deterministic pseudo-random chunking (sizes 1..max). */
function randomCuts(length: number, max: number, seed: number): number[] {
  let state = seed;
  const offsets: number[] = [];
  for (let at = 0; ;) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    at += 1 + (state % max);
    if (at >= length) return offsets;
    offsets.push(at);
  }
}

describe.each(FRAMINGS)("$name watch stream", ({ contentType, frames, types }) => {
  const body = Buffer.concat(frames);

  it("emits every event unchanged when the stream is cut at any single byte offset", () => {
    for (let offset = 0; offset <= body.length; offset++) {
      const { output, typed, rest } = split(contentType, cut(body, [offset]));
      expect(output.equals(body), `cut at ${offset}`).toBe(true);
      expect(rest.length, `cut at ${offset}`).toBe(0);
      expect(
        typed.map((e) => e.type),
        `cut at ${offset}`,
      ).toEqual(types);
      typed.forEach((event, i) => expect(event.bytes.equals(frames[i] ?? Buffer.alloc(0))).toBe(true));
    }
  });

  it("emits each event from the push that delivers its last byte (no batching)", () => {
    const splitter = new WatchEventSplitter(contentType);
    const ends = new Set<number>();
    let end = 0;
    for (const frame of frames) ends.add((end += frame.length) - 1);
    for (let i = 0; i < body.length; i++) {
      const events = splitter.push(body.subarray(i, i + 1));
      if (ends.has(i)) {
        expect(events, `byte ${i}`).toHaveLength(1);
        expect(events[0]?.type).toBeDefined();
      } else {
        expect(events, `byte ${i}`).toEqual([]);
      }
    }
    expect(splitter.end().length).toBe(0);
  });

  it("splits several events that arrive in one chunk, and random chunkings", () => {
    const whole = split(contentType, [body]);
    expect(whole.events.map((e) => e.type)).toEqual(types);
    for (let seed = 1; seed <= 50; seed++) {
      const { output, typed } = split(contentType, cut(body, randomCuts(body.length, 40, seed)));
      expect(output.equals(body), `seed ${seed}`).toBe(true);
      expect(typed).toHaveLength(frames.length);
    }
  });

  it("hands back an incomplete last frame at the end", () => {
    const partial = Buffer.concat([body, (frames[0] ?? Buffer.alloc(0)).subarray(0, 7)]);
    const { events, rest, output } = split(contentType, [partial]);
    expect(events).toHaveLength(frames.length);
    expect(rest.equals(partial.subarray(body.length))).toBe(true);
    expect(output.equals(partial)).toBe(true);
  });
});

describe("event identity", () => {
  it("reads type, kind, name, namespace, uid and resourceVersion from JSON events", () => {
    const { events } = split(JSON_TYPE, [Buffer.concat(JSON_FRAMES)]);
    expect(events.map((e) => ({ type: e.type, object: e.object }))).toEqual([
      {
        type: "ADDED",
        object: { kind: "ConfigMap", name: "a", namespace: "default", uid: "uid-a", resourceVersion: "10" },
      },
      {
        type: "MODIFIED",
        object: { kind: "ConfigMap", name: "b", namespace: "default", uid: "uid-b", resourceVersion: "11" },
      },
      { type: "BOOKMARK", object: { kind: "ConfigMap", resourceVersion: "12" } },
      {
        type: "DELETED",
        object: { kind: "ConfigMap", name: "a", namespace: "default", uid: "uid-a", resourceVersion: "13" },
      },
      { type: "ERROR", object: { kind: "Status" } },
    ]);
  });

  it("reads the same from protobuf events, and only the kind of a Status", () => {
    const { events } = split(PROTOBUF_TYPE, [Buffer.concat(PROTOBUF_FRAMES)]);
    expect(events.map((e) => ({ type: e.type, object: e.object }))).toEqual([
      {
        type: "ADDED",
        object: { kind: "ConfigMap", name: "a", namespace: "default", uid: "uid-a", resourceVersion: "10" },
      },
      {
        type: "MODIFIED",
        object: { kind: "ConfigMap", name: "b", namespace: "default", uid: "uid-b", resourceVersion: "11" },
      },
      {
        type: "DELETED",
        object: { kind: "ConfigMap", name: "a", namespace: "default", uid: "uid-a", resourceVersion: "13" },
      },
      { type: "ERROR", object: { kind: "Status" } },
    ]);
  });
});

describe("protobuf framing", () => {
  // Captured from kube-apiserver v1.35.4 (kwok): GET /api/v1/namespaces/default/configmaps
  // ?watch=1&allowWatchBookmarks=true, Accept: application/vnd.kubernetes.protobuf;stream=watch.
  const CAPTURED_BOOKMARK = Buffer.from(
    "000000610a08424f4f4b4d41524b12550a536b3873000a0f0a0276311209436f6e6669674d617012380a360a0012001a0022002a" +
      "0032033232383800420062210a196b38732e696f2f696e697469616c2d6576656e74732d656e641204747275651a002200",
    "hex",
  );
  const CAPTURED_ADDED = Buffer.from(
    "000000f60a05414444454412ec010ae9016b3873000a0f0a0276311209436f6e6669674d617012cd010ab1010a086361707475" +
      "72656412001a0764656661756c7422002a2465353338613863642d633033612d343639382d626537342d36646430623230" +
      "343233616432033233303800420808ca83b2d80610008a01600a157265636f6e63696c652d636f6e666f726d616e636512" +
      "065570646174651a027631220808ca83b2d806100032084669656c647356313a250a237b22663a64617461223a7b222e22" +
      "3a7b7d2c22663a6772656574696e67223a7b7d7d7d420012170a086772656574696e67120b6772c3bcc39f20646963681a" +
      "002200",
    "hex",
  );

  it("reads frames captured from a real API server", () => {
    const body = Buffer.concat([CAPTURED_BOOKMARK, CAPTURED_ADDED]);
    for (let offset = 0; offset <= body.length; offset++) {
      const { events, output } = split(PROTOBUF_TYPE, cut(body, [offset]));
      expect(output.equals(body)).toBe(true);
      expect(events.map((e) => ({ type: e.type, object: e.object }))).toEqual([
        { type: "BOOKMARK", object: { kind: "ConfigMap", resourceVersion: "228" } },
        {
          type: "ADDED",
          object: {
            kind: "ConfigMap",
            name: "captured",
            namespace: "default",
            uid: "e538a8cd-c03a-4698-be74-6dd0b20423ad",
            resourceVersion: "230",
          },
        },
      ]);
    }
  });

  it("waits for a length prefix split across chunks, one byte at a time", () => {
    const [first = Buffer.alloc(0), second = Buffer.alloc(0)] = PROTOBUF_FRAMES;
    const body = Buffer.concat([first, second]);
    const splitter = new WatchEventSplitter(PROTOBUF_TYPE);
    // The first frame and 1, 2, 3 bytes of the second frame's prefix.
    expect(splitter.push(body.subarray(0, first.length + 1)).map((e) => e.type)).toEqual(["ADDED"]);
    expect(splitter.push(body.subarray(first.length + 1, first.length + 2))).toEqual([]);
    expect(splitter.push(body.subarray(first.length + 2, first.length + 3))).toEqual([]);
    expect(splitter.push(body.subarray(first.length + 3, first.length + 4))).toEqual([]);
    const last = splitter.push(body.subarray(first.length + 4));
    expect(last.map((e) => e.type)).toEqual(["MODIFIED"]);
    expect(last[0]?.bytes.equals(second)).toBe(true);
  });

  it("frames an event larger than 64 KiB arriving in many chunks", () => {
    const big = protobufFrame("ADDED", protobufConfigMap("big", "99", 200_000));
    const body = Buffer.concat([big, PROTOBUF_FRAMES[0] ?? Buffer.alloc(0)]);
    expect(big.readUInt32BE(0)).toBeGreaterThan(65_535); // the third prefix byte is in use
    const { output, typed } = split(PROTOBUF_TYPE, cut(body, randomCuts(body.length, 16_384, 7)));
    expect(output.equals(body)).toBe(true);
    expect(typed.map((e) => [e.type, e.object?.name])).toEqual([
      ["ADDED", "big"],
      ["ADDED", "a"],
    ]);
    expect(typed[0]?.bytes.equals(big)).toBe(true);
  });

  it("passes a plain (non-watch) protobuf body through: its magic reads as an absurd length", () => {
    const body = protobufConfigMap("a", "1");
    const { events, output } = split(PROTOBUF_TYPE, [body]);
    expect(events).toEqual([{ bytes: body }]);
    expect(output.equals(body)).toBe(true);
  });
});

describe("fallback to pass-through", () => {
  const jsonBody = Buffer.concat(JSON_FRAMES);

  it.each([
    ["application/cbor-seq", undefined],
    ["application/yaml", undefined],
    ["text/plain", undefined],
    ["", undefined],
    [undefined, undefined],
    [JSON_TYPE, "gzip"],
  ])("passes every chunk through as it came for Content-Type %j, Content-Encoding %j", (type, encoding) => {
    const chunks = cut(jsonBody, [1, 50, 51, 200]);
    const { events, output, rest } = split(type, chunks, { contentEncoding: encoding });
    expect(events.map((e) => e.bytes)).toEqual(chunks);
    expect(events.every((e) => e.type === undefined)).toBe(true);
    expect(rest.length).toBe(0);
    expect(output.equals(jsonBody)).toBe(true);
  });

  it.each([
    ["application/json", "json"],
    ["application/json;stream=watch", "json"],
    ["Application/JSON; charset=utf-8", "json"],
    ["application/vnd.kubernetes.protobuf;stream=watch", "protobuf"],
    ["application/vnd.kubernetes.protobuf", "protobuf"],
    ["application/cbor-seq", "none"],
  ])("frames Content-Type %j as %s", (type, framing) => {
    expect(watchFraming(type)).toBe(framing);
    expect(watchFraming(type, "identity")).toBe(framing);
  });

  const garbledJson: [string, Buffer][] = [
    ["invalid JSON", Buffer.from('{"type":"ADDED","object":\n')],
    ["an unknown event type", jsonFrame("RENAMED", configMap("x", "1"))],
    ["a JSON value that is not an event", Buffer.from("[1,2,3]\n")],
    ["an empty line", Buffer.from("\n")],
  ];
  it.each(garbledJson)("JSON: stops framing at %s, delivering every byte", (_name, bad) => {
    const [first = Buffer.alloc(0), ...others] = JSON_FRAMES;
    const body = Buffer.concat([first, bad, ...others]);
    for (let offset = 0; offset <= body.length; offset += 7) {
      const { typed, output } = split(JSON_TYPE, cut(body, [offset, offset + 3]));
      expect(output.equals(body), `cut at ${offset}`).toBe(true);
      // Only the event before the bad frame is framed; valid events after it pass through unframed.
      expect(typed.map((e) => e.type)).toEqual(["ADDED"]);
    }
  });

  it("JSON: stops framing at a line longer than the limit, without waiting for its end", () => {
    const [first = Buffer.alloc(0), second = Buffer.alloc(0)] = JSON_FRAMES;
    const long = Buffer.from(`${JSON.stringify({ type: "ADDED", object: { pad: "x".repeat(500) } })}\n`);
    const splitter = new WatchEventSplitter(JSON_TYPE, { maxFrameBytes: 400 });
    const firstPush = splitter.push(Buffer.concat([first, long.subarray(0, 300)]));
    expect(firstPush.map((e) => e.type)).toEqual(["ADDED"]);
    const secondPush = splitter.push(long.subarray(300, 450)); // 450 > 400 buffered: give up
    expect(secondPush.map((e) => e.bytes)).toEqual([long.subarray(0, 450)]);
    expect(secondPush[0]?.type).toBeUndefined();
    const thirdPush = splitter.push(Buffer.concat([long.subarray(450), second]));
    expect(thirdPush).toHaveLength(1);
    expect(thirdPush[0]?.type).toBeUndefined();
    expect(splitter.framed).toBe(false);
    expect(splitter.end().length).toBe(0);
  });

  const oversized = Buffer.from([0x7f, 0xff, 0xff, 0xff, 1, 2, 3]);
  const unknownType = protobufFrame("RENAMED", protobufConfigMap("x", "1"));
  const garbledEvent = Buffer.concat([Buffer.from([0, 0, 0, 3]), Buffer.from([0x0f, 0xff, 0xff])]); // wire type 7
  const empty = Buffer.from([0, 0, 0, 0]);
  const garbledProtobuf: [string, Buffer][] = [
    ["a length prefix beyond 64 MiB", oversized],
    ["an unknown event type", unknownType],
    ["a frame that is not a protobuf message", garbledEvent],
    ["an empty frame", empty],
  ];
  it.each(garbledProtobuf)("protobuf: stops framing at %s, delivering every byte", (_name, bad) => {
    const [first = Buffer.alloc(0), ...others] = PROTOBUF_FRAMES;
    const body = Buffer.concat([first, bad, ...others]);
    for (let offset = 0; offset <= body.length; offset += 5) {
      const { typed, output } = split(PROTOBUF_TYPE, cut(body, [offset, offset + 2]));
      expect(output.equals(body), `cut at ${offset}`).toBe(true);
      expect(typed.map((e) => e.type)).toEqual(["ADDED"]);
    }
  });
});

describe("watchEventStream", () => {
  it("writes each complete event as one chunk, synchronously, and the remainder at the end", async () => {
    const [first = Buffer.alloc(0), second = Buffer.alloc(0), third = Buffer.alloc(0)] = PROTOBUF_FRAMES;
    const seen: WatchEvent[] = [];
    const stream = watchEventStream(PROTOBUF_TYPE, { onEvent: (e) => seen.push(e) });
    const out: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => out.push(chunk));
    await new Promise((resolve) => setImmediate(resolve)); // let the stream start flowing

    // The first event and part of the second: the first leaves during this write.
    stream.write(Buffer.concat([first, second.subarray(0, 10)]));
    expect(out).toEqual([first]);
    stream.write(Buffer.concat([second.subarray(10), third.subarray(0, 3)]));
    expect(out).toEqual([first, second]);

    const ended = new Promise((resolve) => stream.on("end", resolve));
    stream.end();
    await ended;
    expect(out).toEqual([first, second, third.subarray(0, 3)]);
    expect(seen.map((e) => e.type)).toEqual(["ADDED", "MODIFIED", undefined]);
  });

  it("pipes an unknown content type through chunk for chunk", async () => {
    const stream = watchEventStream("application/cbor-seq");
    const out: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => out.push(chunk));
    const ended = new Promise((resolve) => stream.on("end", resolve));
    const chunks = cut(Buffer.concat(JSON_FRAMES), [3, 100]);
    for (const chunk of chunks) stream.write(chunk);
    stream.end();
    await ended;
    expect(out).toEqual(chunks);
  });
});
