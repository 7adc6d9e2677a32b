/**
 * Reads an object's identity (metadata.name, uid, resourceVersion,
 * generation) from a Kubernetes protobuf body, without a schema.
 *
 * Built-in types travel as protobuf whenever a client asks for it (client-go
 * and controller-runtime do for core kinds), and the write log still needs
 * to know which object a create made and which resourceVersion an update
 * carried. The envelope is the 4 bytes "k8s\0" and a runtime.Unknown
 * message whose field 2 holds the object; every top-level Kubernetes type
 * keeps its ObjectMeta in field 1; ObjectMeta numbers name 1, uid 5,
 * resourceVersion 6 and generation 7.
 */

export interface ProtobufMetadata {
  readonly name?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
}

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]); // "k8s\0"

export function isKubernetesProtobuf(body: Buffer): boolean {
  return body.length >= 4 && body.subarray(0, 4).equals(MAGIC);
}

/** The identity in a protobuf-encoded object, or undefined when the body is not one. */
export function protobufMetadata(body: Buffer): ProtobufMetadata | undefined {
  if (!isKubernetesProtobuf(body)) return undefined;
  try {
    const raw = lengthDelimited(body.subarray(4), 2);
    const meta = raw && lengthDelimited(raw, 1);
    if (!meta) return undefined;
    const text = (field: number) => {
      const value = lengthDelimited(meta, field);
      return value && value.length > 0 ? value.toString("utf8") : undefined;
    };
    const generation = varintField(meta, 7);
    return {
      ...(text(1) ? { name: text(1) } : {}),
      ...(text(5) ? { uid: text(5) } : {}),
      ...(text(6) ? { resourceVersion: text(6) } : {}),
      ...(generation === undefined ? {} : { generation }),
    };
  } catch {
    return undefined; // truncated or not what we think: identity unknown, never a failed request
  }
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
  visit: (field: number, wireType: number, value: Buffer | number) => boolean,
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
    if (visit(field, wireType, value)) return;
  }
}

function lengthDelimited(message: Buffer, wanted: number): Buffer | undefined {
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
