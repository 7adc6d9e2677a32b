/**
 * Reads an object's identity (metadata.name, uid, resourceVersion,
 * generation) from a Kubernetes protobuf body, without a schema.
 *
 * Built-in types travel as protobuf whenever a client asks for it (client-go
 * and controller-runtime do for core kinds), and the write log still needs
 * to know which object a create made and which resourceVersion an update
 * carried. The envelope is the 4 bytes "k8s\0" and a runtime.Unknown
 * message whose field 2 holds the object; every top-level Kubernetes type
 * keeps its ObjectMeta in field 1; ObjectMeta numbers name 1, generateName
 * 2, uid 5, resourceVersion 6, generation 7, deletionTimestamp 9 and
 * ownerReferences 13 (an OwnerReference keeps its uid in field 4).
 */

export interface ProtobufMetadata {
  readonly name?: string;
  readonly generateName?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  /** True when metadata.deletionTimestamp is set: the object is terminating. */
  readonly terminating?: boolean;
  /** UIDs of metadata.ownerReferences. */
  readonly ownerUids?: readonly string[];
}

const OBJECT_META = 1;
const META = {
  name: 1,
  generateName: 2,
  namespace: 3,
  uid: 5,
  resourceVersion: 6,
  generation: 7,
  deletionTimestamp: 9,
  ownerReferences: 13,
};
const OWNER_REFERENCE_UID = 4;

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]); // "k8s\0"

export function isKubernetesProtobuf(body: Buffer): boolean {
  return body.length >= 4 && body.subarray(0, 4).equals(MAGIC);
}

/** The identity in a protobuf-encoded object, or undefined when the body is not one. */
export function protobufMetadata(body: Buffer): ProtobufMetadata | undefined {
  if (!isKubernetesProtobuf(body)) return undefined;
  try {
    const raw = lengthDelimited(body.subarray(4), 2);
    const meta = raw && lengthDelimited(raw, OBJECT_META);
    if (!meta) return undefined;
    const text = (field: number) => {
      const value = lengthDelimited(meta, field);
      return value && value.length > 0 ? value.toString("utf8") : undefined;
    };
    const generation = varintField(meta, META.generation);
    const ownerUids = repeatedLengthDelimited(meta, META.ownerReferences)
      .map((owner) => lengthDelimited(owner, OWNER_REFERENCE_UID)?.toString("utf8") ?? "")
      .filter((uid) => uid !== "");
    const name = text(META.name);
    const generateName = text(META.generateName);
    const namespace = text(META.namespace);
    const uid = text(META.uid);
    const resourceVersion = text(META.resourceVersion);
    return {
      ...(name ? { name } : {}),
      ...(generateName ? { generateName } : {}),
      ...(namespace ? { namespace } : {}),
      ...(uid ? { uid } : {}),
      ...(resourceVersion ? { resourceVersion } : {}),
      ...(generation === undefined ? {} : { generation }),
      ...(lengthDelimited(meta, META.deletionTimestamp) ? { terminating: true } : {}),
      ...(ownerUids.length > 0 ? { ownerUids } : {}),
    };
  } catch {
    return undefined; // truncated or not what we think: identity unknown, never a failed request
  }
}

/**
 * The same protobuf object with metadata.resourceVersion set to `value`: how
 * the proxy turns an unconditional protobuf update into one with a
 * precondition. Every enclosing length is re-encoded; all other fields keep
 * their bytes and order. Undefined when the body is not a Kubernetes protobuf
 * object.
 */
export function protobufWithResourceVersion(body: Buffer, value: string): Buffer | undefined {
  return editProtobufMetadata(body, (meta) =>
    Buffer.concat([
      withoutField(meta, META.resourceVersion),
      encodeLengthDelimited(META.resourceVersion, Buffer.from(value, "utf8")),
    ]),
  );
}

/** Rewrites the ObjectMeta of a "k8s\0" envelope with `edit`; undefined when there is none. */
export function editProtobufMetadata(body: Buffer, edit: (meta: Buffer) => Buffer): Buffer | undefined {
  if (!isKubernetesProtobuf(body)) return undefined;
  try {
    const envelope = body.subarray(4);
    const raw = lengthDelimited(envelope, 2);
    const meta = raw && lengthDelimited(raw, OBJECT_META);
    if (!raw || !meta) return undefined;
    const newRaw = replaceField(raw, OBJECT_META, edit(meta));
    return Buffer.concat([MAGIC, replaceField(envelope, 2, newRaw)]);
  } catch {
    return undefined;
  }
}

/** A length-delimited field: key, length, bytes. */
export function encodeLengthDelimited(field: number, value: Buffer): Buffer {
  return Buffer.concat([encodeVarint(field * 8 + 2), encodeVarint(value.length), value]);
}

function encodeVarint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

/** The message's fields in order, each with its raw bytes (key included). */
function rawFields(message: Buffer): { field: number; bytes: Buffer }[] {
  const fields: { field: number; bytes: Buffer }[] = [];
  let start = 0;
  walk(message, (field, _wireType, _value, end) => {
    fields.push({ field, bytes: message.subarray(start, end) });
    start = end;
    return false;
  });
  return fields;
}

function withoutField(message: Buffer, field: number): Buffer {
  return Buffer.concat(
    rawFields(message)
      .filter((f) => f.field !== field)
      .map((f) => f.bytes),
  );
}

/** The message with its (single) length-delimited `field` replaced in place. */
function replaceField(message: Buffer, field: number, value: Buffer): Buffer {
  return Buffer.concat(
    rawFields(message).map((f) => (f.field === field ? encodeLengthDelimited(field, value) : f.bytes)),
  );
}

/** The `reason` of a protobuf metav1.Status answer (field 4 of the object), e.g. "Conflict". */
export function protobufStatusReason(body: Buffer): string | undefined {
  if (!isKubernetesProtobuf(body)) return undefined;
  try {
    const raw = lengthDelimited(body.subarray(4), 2);
    const reason = raw && lengthDelimited(raw, 4);
    return reason && reason.length > 0 ? reason.toString("utf8") : undefined;
  } catch {
    return undefined;
  }
}

/** Walks a message's fields, calling `visit` with each field number, wire type and value. */
function walk(
  message: Buffer,
  visit: (field: number, wireType: number, value: Buffer | number, end: number) => boolean,
): void {
  let offset = 0;
  while (offset < message.length) {
    const [key, afterKey] = readVarint(message, offset);
    const field = Math.floor(key / 8);
    const wireType = key % 8;
    offset = afterKey;
    let value: Buffer | number;
    switch (wireType) {
      case 0: {
        const [v, next] = readVarint(message, offset);
        value = v;
        offset = next;
        break;
      }
      case 1:
        value = 0;
        offset += 8;
        break;
      case 2: {
        const [length, next] = readVarint(message, offset);
        value = message.subarray(next, next + length);
        if (next + length > message.length) throw new Error("truncated field");
        offset = next + length;
        break;
      }
      case 5:
        value = 0;
        offset += 4;
        break;
      default:
        throw new Error(`unsupported wire type ${wireType}`);
    }
    if (offset > message.length) throw new Error("truncated field");
    if (visit(field, wireType, value, offset)) return;
  }
}

/** The kind in the envelope's TypeMeta (field 1; kind is its field 2), e.g. "ConfigMap" or "Status". */
export function protobufKind(body: Buffer): string | undefined {
  if (!isKubernetesProtobuf(body)) return undefined;
  try {
    const typeMeta = lengthDelimited(body.subarray(4), 1);
    const kind = typeMeta && lengthDelimited(typeMeta, 2);
    return kind && kind.length > 0 ? kind.toString("utf8") : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The first length-delimited field `wanted` of a protobuf message (bytes,
 * strings and embedded messages are all length-delimited); throws on a
 * malformed message.
 */
export function lengthDelimited(message: Buffer, wanted: number): Buffer | undefined {
  let found: Buffer | undefined;
  walk(message, (field, wireType, value) => {
    if (field === wanted && wireType === 2 && Buffer.isBuffer(value)) {
      found = value;
      return true;
    }
    return false;
  });
  return found;
}

function repeatedLengthDelimited(message: Buffer, wanted: number): Buffer[] {
  const found: Buffer[] = [];
  walk(message, (field, wireType, value) => {
    if (field === wanted && wireType === 2 && Buffer.isBuffer(value)) found.push(value);
    return false;
  });
  return found;
}

function varintField(message: Buffer, wanted: number): number | undefined {
  let found: number | undefined;
  walk(message, (field, wireType, value) => {
    if (field === wanted && wireType === 0 && typeof value === "number") {
      found = value;
      return true;
    }
    return false;
  });
  return found;
}

/** A base-128 varint; numbers beyond 2^53 lose precision, which no generation reaches. */
function readVarint(buffer: Buffer, start: number): [number, number] {
  let result = 0;
  let multiplier = 1;
  for (let offset = start; offset < buffer.length && offset < start + 10; offset++) {
    const byte = buffer[offset] ?? 0;
    result += (byte & 0x7f) * multiplier;
    multiplier *= 128;
    if ((byte & 0x80) === 0) return [result, offset + 1];
  }
  throw new Error("truncated varint");
}
