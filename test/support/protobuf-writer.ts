/** A minimal protobuf writer for tests: enough to build the objects, envelopes and watch frames the API server sends. */
export function varint(value: number): Buffer {
  const bytes: number[] = [];
  let v = value;
  while (v >= 128) {
    bytes.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  bytes.push(v);
  return Buffer.from(bytes);
}

export const bytesField = (field: number, value: Buffer): Buffer =>
  Buffer.concat([varint(field * 8 + 2), varint(value.length), value]);
export const textField = (field: number, value: string): Buffer => bytesField(field, Buffer.from(value));
export const varintField = (field: number, value: number): Buffer =>
  Buffer.concat([varint(field * 8), varint(value)]);
