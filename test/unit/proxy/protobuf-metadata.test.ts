import { describe, expect, it } from "vitest";
import {
  isKubernetesProtobuf,
  protobufMetadata,
  protobufStatusReason,
} from "../../../src/proxy/protobuf-metadata.js";
import { bytesField, textField, varintField } from "../../support/protobuf-writer.js";

const envelope = (object: Buffer) =>
  Buffer.concat([
    Buffer.from("k8s\0", "latin1"),
    bytesField(1, Buffer.concat([textField(1, "apps/v1"), textField(2, "Deployment")])), // typeMeta
    bytesField(2, object), // raw
  ]);

describe("protobufMetadata", () => {
  it("reads name, uid, resourceVersion and generation from ObjectMeta", () => {
    const meta = Buffer.concat([
      textField(1, "web"),
      textField(3, "ns"),
      textField(5, "8f0c-uid"),
      textField(6, "4242"),
      varintField(7, 300), // multi-byte varint
      bytesField(11, Buffer.from([1, 2, 3])), // labels and the like are skipped
    ]);
    const body = envelope(Buffer.concat([bytesField(1, meta), bytesField(2, Buffer.from("spec"))]));
    expect(isKubernetesProtobuf(body)).toBe(true);
    expect(protobufMetadata(body)).toEqual({
      name: "web",
      namespace: "ns",
      uid: "8f0c-uid",
      resourceVersion: "4242",
      generation: 300,
    });
  });

  it("leaves out what a create request does not carry yet, and reads its generateName", () => {
    const body = envelope(bytesField(1, Buffer.concat([textField(2, "web-"), textField(3, "ns")])));
    expect(protobufMetadata(body)).toEqual({ generateName: "web-", namespace: "ns" });
  });

  it("reads the reason of a Status answer", () => {
    const status = Buffer.concat([
      textField(2, "Failure"),
      textField(3, "the object has been modified"),
      textField(4, "Conflict"),
      varintField(6, 409),
    ]);
    expect(protobufStatusReason(envelope(status))).toBe("Conflict");
  });

  it.each([
    ["JSON", Buffer.from('{"metadata":{"name":"x"}}')],
    ["empty", Buffer.alloc(0)],
    ["truncated", envelope(bytesField(1, textField(1, "web"))).subarray(0, 12)],
  ])("returns undefined for a body that is not a whole protobuf object: %s", (_, body) => {
    expect(protobufMetadata(body)).toBeUndefined();
  });
});
