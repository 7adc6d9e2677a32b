/**
 * Splits a Kubernetes watch response into its events.
 *
 * This is the one seam where the proxy sees a watch as a sequence of events
 * rather than as bytes, so that a fault can hold, delay or drop an event
 * there (watch-gate.ts); without an armed watch fault every event is passed
 * through as it came.
 *
 * Guarantees:
 * - Bytes are never changed: the concatenation of every emitted chunk is the
 *   response body, byte for byte, whatever the framing and however the body
 *   was chunked.
 * - No batching: an event is emitted from the very `push` (or stream write)
 *   whose chunk holds its last byte; bytes of a following incomplete event
 *   never hold it back.
 * - Never breaks a stream: a content type it does not know, a frame larger
 *   than `maxFrameBytes`, or a frame that does not parse as a watch event
 *   turns the rest of the stream into plain pass-through.
 *
 * The framing, as the API server writes it (k8s.io/apiserver
 * pkg/endpoints/handlers/watch.go and response.go, with the stream
 * serializers of k8s.io/apimachinery pkg/runtime/serializer):
 * - `application/json`: each event is a metav1.WatchEvent
 *   `{"type":"ADDED","object":{...}}` written by encoding/json, compact and
 *   ending in "\n". A frame is one line, its "\n" included.
 * - `application/vnd.kubernetes.protobuf;stream=watch`: each event is a
 *   4-byte big-endian length and that many bytes of a metav1.WatchEvent
 *   message, encoded raw (no "k8s\0" envelope): type = field 1 (string),
 *   object = field 2, a runtime.RawExtension message whose field 1 (raw)
 *   holds the object with the "k8s\0" + runtime.Unknown envelope.
 * Anything else (`application/cbor-seq`, a compressed body) passes through.
 */

import { Transform } from "node:stream";
import { lengthDelimited, protobufKind, protobufMetadata } from "./protobuf-metadata.js";
import { isRecord } from "../util/records.js";
import type { WatchGate } from "./watch-gate.js";

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

/** Which object an event is about, as far as its encoding tells. */
export interface WatchObjectIdentity {
  readonly kind?: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
}

/**
 * One chunk of the watch body. With a `type`, `bytes` are exactly one
 * complete event frame (for protobuf, length prefix included); without, they
 * are pass-through bytes the splitter did not (or could no longer) frame.
 */
export interface WatchEvent {
  readonly bytes: Buffer;
  readonly type?: WatchEventType;
  readonly object?: WatchObjectIdentity;
}

export interface WatchEventSplitterOptions {
  /** The response's Content-Encoding; anything but identity passes through. */
  readonly contentEncoding?: string | undefined;
  /** A frame longer than this stops framing (the stream passes through). 64 MiB by default. */
  readonly maxFrameBytes?: number;
}

export type WatchFraming = "json" | "protobuf" | "none";

const DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;
const EVENT_TYPES: ReadonlySet<string> = new Set(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);
const NEWLINE = 0x0a;

/** The framing of a watch body with this Content-Type (and Content-Encoding). */
export function watchFraming(contentType: string | undefined, contentEncoding?: string): WatchFraming {
  const encoding = contentEncoding?.trim().toLowerCase();
  if (encoding && encoding !== "identity") return "none";
  const mediaType = (contentType ?? "").split(";")[0]?.trim().toLowerCase();
  if (mediaType === "application/json") return "json";
  if (mediaType === "application/vnd.kubernetes.protobuf") return "protobuf";
  return "none";
}

/**
 * Cuts a watch body into events, chunk by chunk. Pure: no I/O, no timers.
 * Feed it every chunk with `push`, then call `end` once.
 */
export class WatchEventSplitter {
  private framing: WatchFraming;
  private readonly maxFrameBytes: number;
  private readonly pending = new ByteQueue();
  /** JSON: bytes at the front of `pending` known to hold no newline. */
  private scanned = 0;

  constructor(contentType: string | undefined, options: WatchEventSplitterOptions = {}) {
    this.framing = watchFraming(contentType, options.contentEncoding);
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  }

  /** False once the splitter passes bytes through unframed (from the start, or after a frame it could not read). */
  get framed(): boolean {
    return this.framing !== "none";
  }

  /** The events this chunk completes, in order; pass-through bytes come as events without a type. */
  push(chunk: Buffer): WatchEvent[] {
    if (chunk.length === 0) return [];
    if (this.framing === "none") return [{ bytes: chunk }];
    this.pending.push(chunk);
    const events: WatchEvent[] = [];
    for (;;) {
      const length = this.framing === "json" ? this.jsonFrameLength() : this.protobufFrameLength();
      if (length === undefined) break;
      if (length === "unframeable") {
        this.passThrough(events);
        break;
      }
      const bytes = this.pending.take(length);
      this.scanned = 0;
      const event = this.framing === "json" ? parseJsonEvent(bytes) : parseProtobufEvent(bytes);
      if (!event) {
        events.push({ bytes });
        this.passThrough(events);
        break;
      }
      events.push(event);
    }
    return events;
  }

  /** The bytes of an incomplete last frame, once the stream has ended (empty when there are none). */
  end(): Buffer {
    this.scanned = 0;
    return this.pending.take(this.pending.length);
  }

  /** Gives up framing for the rest of the stream: what is buffered leaves as it is. */
  private passThrough(events: WatchEvent[]): void {
    this.framing = "none";
    const rest = this.end();
    if (rest.length > 0) events.push({ bytes: rest });
  }

  private jsonFrameLength(): number | "unframeable" | undefined {
    const newline = this.pending.indexOf(NEWLINE, this.scanned);
    if (newline >= 0) {
      return newline + 1 > this.maxFrameBytes ? "unframeable" : newline + 1;
    }
    this.scanned = this.pending.length;
    return this.pending.length > this.maxFrameBytes ? "unframeable" : undefined;
  }

  private protobufFrameLength(): number | "unframeable" | undefined {
    if (this.pending.length < 4) return undefined;
    const length = 4 + this.pending.peek(4).readUInt32BE(0);
    if (length > this.maxFrameBytes) return "unframeable";
    return this.pending.length >= length ? length : undefined;
  }
}

/**
 * A byte stream (into the proxy's response) that emits each watch event as one
 * chunk, synchronously from the write whose chunk completed it, and at the
 * end whatever incomplete frame remains. `onEvent` sees every chunk just
 * before it is emitted. It never fails the stream for what the body holds.
 */
export function watchEventStream(
  contentType: string | undefined,
  options: WatchEventSplitterOptions & {
    /** Each event as it is sent on (after the gate, when there is one). */
    readonly onEvent?: (event: WatchEvent) => void;
    /**
     * Makes the stream's gate (watch faults: hold, coalesce) from the
     * function that sends an event on; without one, every event is sent as
     * it comes.
     */
    readonly gate?: (send: (event: WatchEvent) => void) => WatchGate;
  } = {},
): Transform {
  const splitter = new WatchEventSplitter(contentType, options);
  const stream: Transform = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      for (const event of splitter.push(chunk)) {
        if (gate) gate.pass(event);
        else send(event);
      }
      callback();
    },
    flush(callback) {
      // What a fault still holds goes out before the stream ends: a watch restarted after this
      // one would start past it, and the API server would never send it again.
      gate?.end();
      const rest = splitter.end();
      if (rest.length > 0) send({ bytes: rest });
      callback();
    },
  });
  function send(event: WatchEvent): void {
    options.onEvent?.(event);
    stream.push(event.bytes);
  }
  const gate = options.gate?.(send);
  return stream;
}

function parseJsonEvent(bytes: Buffer): WatchEvent | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString("utf8"));
  } catch {
    return undefined;
  }
  if (!isRecord(parsed) || !isEventType(parsed.type)) return undefined;
  const object = isRecord(parsed.object) ? parsed.object : {};
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  const identity = compact({
    kind: text(object.kind),
    name: text(metadata.name),
    namespace: text(metadata.namespace),
    uid: text(metadata.uid),
    resourceVersion: text(metadata.resourceVersion),
  });
  return { bytes, type: parsed.type, object: identity };
}

function parseProtobufEvent(bytes: Buffer): WatchEvent | undefined {
  try {
    const event = bytes.subarray(4);
    const type = lengthDelimited(event, 1)?.toString("utf8");
    if (!isEventType(type)) return undefined;
    const rawExtension = lengthDelimited(event, 2);
    const raw = rawExtension && lengthDelimited(rawExtension, 1);
    return { bytes, type, object: raw ? protobufIdentity(raw) : {} };
  } catch {
    return undefined;
  }
}

function protobufIdentity(raw: Buffer): WatchObjectIdentity {
  const kind = protobufKind(raw);
  // A Status (the object of an ERROR event) has ListMeta, not ObjectMeta, in field 1.
  if (kind === "Status") return { kind };
  const meta = protobufMetadata(raw);
  return compact({
    kind,
    name: meta?.name,
    namespace: meta?.namespace,
    uid: meta?.uid,
    resourceVersion: meta?.resourceVersion,
  });
}

/**
 * Chunks not yet framed, kept as they came so that a large frame arriving in
 * many chunks is copied once, when it is taken, not on every push.
 */
class ByteQueue {
  private chunks: Buffer[] = [];
  private size = 0;

  get length(): number {
    return this.size;
  }

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  /** The position of the first `byte` at or after `from`, or -1. */
  indexOf(byte: number, from: number): number {
    let base = 0;
    for (const chunk of this.chunks) {
      if (from < base + chunk.length) {
        const found = chunk.indexOf(byte, Math.max(0, from - base));
        if (found >= 0) return base + found;
      }
      base += chunk.length;
    }
    return -1;
  }

  /** The first `count` bytes, left in the queue. */
  peek(count: number): Buffer {
    const first = this.chunks[0];
    if (first && first.length >= count) return first.subarray(0, count);
    return Buffer.concat(this.chunks, this.size).subarray(0, count);
  }

  /** Removes and returns the first `count` bytes (a view, not a copy, when one chunk holds them). */
  take(count: number): Buffer {
    const parts: Buffer[] = [];
    let needed = Math.min(count, this.size);
    const taken = needed;
    let whole = 0;
    for (const chunk of this.chunks) {
      if (needed === 0) break;
      if (chunk.length <= needed) {
        parts.push(chunk);
        whole++;
        needed -= chunk.length;
      } else {
        parts.push(chunk.subarray(0, needed));
        this.chunks[whole] = chunk.subarray(needed);
        needed = 0;
      }
    }
    this.chunks.splice(0, whole);
    this.size -= taken;
    return parts.length === 1 && parts[0] ? parts[0] : Buffer.concat(parts, taken);
  }
}

function isEventType(value: unknown): value is WatchEventType {
  return typeof value === "string" && EVENT_TYPES.has(value);
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** Drops undefined properties, so identities compare and print cleanly. */
function compact(identity: Record<string, string | undefined>): WatchObjectIdentity {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(identity)) if (value !== undefined) out[key] = value;
  return out;
}
