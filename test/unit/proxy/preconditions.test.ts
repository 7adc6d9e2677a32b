import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import {
  parseWriteBody,
  sentPrecondition,
  withPrecondition,
  type WriteBody,
} from "../../../src/proxy/preconditions.js";
import {
  editProtobufMetadata,
  encodeLengthDelimited,
  protobufMetadata,
  protobufWithResourceVersion,
} from "../../../src/proxy/protobuf-metadata.js";

const CONFIGMAPS = { group: "", resource: "configmaps" };

/** A write as the proxy reads it, from raw text (JSON unless a content type says otherwise). */
function write(
  verb: WriteBody["verb"],
  text: string,
  options: {
    patchType?: WriteBody["patchType"];
    contentType?: string;
    group?: string;
    resource?: string;
  } = {},
): WriteBody {
  const raw = Buffer.from(text);
  const { parsed, reencodable } = parseWriteBody(raw, options.contentType ?? "application/json");
  return {
    verb,
    group: options.group ?? CONFIGMAPS.group,
    resource: options.resource ?? CONFIGMAPS.resource,
    patchType: options.patchType,
    body: raw,
    parsed,
    reencodable,
  };
}
function body(verb: WriteBody["verb"], value: unknown, patchType?: WriteBody["patchType"]): WriteBody {
  return write(verb, JSON.stringify(value), { patchType });
}

/** A minimal protobuf ConfigMap: envelope, raw object with metadata {name 1, uid 5, rv 6}, and data field 2. */
function protobufObject(meta: Buffer): Buffer {
  const data = encodeLengthDelimited(
    2,
    Buffer.concat([encodeLengthDelimited(1, Buffer.from("k")), encodeLengthDelimited(2, Buffer.from("v"))]),
  );
  const raw = Buffer.concat([encodeLengthDelimited(1, meta), data]);
  const typeMeta = encodeLengthDelimited(
    1,
    Buffer.concat([
      encodeLengthDelimited(1, Buffer.from("v1")),
      encodeLengthDelimited(2, Buffer.from("ConfigMap")),
    ]),
  );
  return Buffer.concat([
    Buffer.from("k8s\0", "binary"),
    typeMeta,
    encodeLengthDelimited(2, raw),
    encodeLengthDelimited(3, Buffer.from("")),
  ]);
}
const meta = (fields: [number, string][]) =>
  Buffer.concat(fields.map(([f, v]) => encodeLengthDelimited(f, Buffer.from(v))));

describe("sentPrecondition", () => {
  it.each([
    ["PUT with metadata.resourceVersion", body("update", { metadata: { resourceVersion: "12" } }), "12"],
    ["PUT without", body("update", { metadata: { name: "a" } }), undefined],
    [
      "merge patch naming a resourceVersion",
      body("patch", { metadata: { resourceVersion: "3" } }, "merge"),
      "3",
    ],
    [
      "JSON patch testing it",
      body("patch", [{ op: "test", path: "/metadata/resourceVersion", value: "4" }], "json"),
      "4",
    ],
    [
      "JSON patch without it",
      body("patch", [{ op: "replace", path: "/data/a", value: "1" }], "json"),
      undefined,
    ],
    ["delete with preconditions", body("delete", { preconditions: { resourceVersion: "8" } }), "8"],
    [
      "create (a resourceVersion there is no precondition)",
      body("create", { metadata: { resourceVersion: "1" } }),
      undefined,
    ],
  ])("%s", (_name, write, expected) => {
    expect(sentPrecondition(write)).toBe(expected);
  });

  it("reads a protobuf update's resourceVersion", () => {
    const proto = protobufObject(
      meta([
        [1, "a"],
        [6, "77"],
      ]),
    );
    expect(sentPrecondition({ verb: "update", ...CONFIGMAPS, body: proto })).toBe("77");
  });
});

describe("withPrecondition", () => {
  it("sets metadata.resourceVersion of a JSON update, keeping everything else", () => {
    const out = withPrecondition(
      body("update", { kind: "ConfigMap", metadata: { name: "a" }, data: { x: "1" } }),
      "9",
    );
    expect(JSON.parse(String(out))).toEqual({
      kind: "ConfigMap",
      metadata: { name: "a", resourceVersion: "9" },
      data: { x: "1" },
    });
  });

  it.each(["merge", "strategic"] as const)("adds it to a %s patch, with or without metadata", (type) => {
    expect(JSON.parse(String(withPrecondition(body("patch", { data: { x: "1" } }, type), "9")))).toEqual({
      data: { x: "1" },
      metadata: { resourceVersion: "9" },
    });
    expect(
      JSON.parse(String(withPrecondition(body("patch", { metadata: { labels: { a: "b" } } }, type), "9"))),
    ).toEqual({ metadata: { labels: { a: "b" }, resourceVersion: "9" } });
  });

  it("prepends a replace of /metadata/resourceVersion to a JSON patch", () => {
    const ops = [{ op: "replace", path: "/data/a", value: "1" }];
    expect(JSON.parse(String(withPrecondition(body("patch", ops, "json"), "9")))).toEqual([
      { op: "replace", path: "/metadata/resourceVersion", value: "9" },
      ...ops,
    ]);
  });

  it("conditions a server-side apply sent as JSON (client-go's way), keeping its media type's meaning", () => {
    const apply = write(
      "patch",
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"x":"1"}}',
      {
        patchType: "apply",
        contentType: "application/apply-patch+yaml",
      },
    );
    expect(parse(String(withPrecondition(apply, "9")))).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", resourceVersion: "9" },
      data: { x: "1" },
    });
  });

  it("never re-encodes a server-side apply sent as real YAML: the API server reads YAML 1.1 (010 is 8)", () => {
    const yaml = write(
      "patch",
      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  replicas: 010\n",
      {
        patchType: "apply",
        contentType: "application/apply-patch+yaml",
        group: "apps",
        resource: "deployments",
      },
    );
    expect(yaml.parsed).toMatchObject({ kind: "Deployment" }); // read for the write log
    expect(yaml.reencodable).toBe(false);
    expect(withPrecondition(yaml, "9")).toBeUndefined();
  });

  it("never conditions an update of a resource that refuses unconditional updates: the server's 422 must stand", () => {
    const object = '{"apiVersion":"demo.example/v1","kind":"WebApp","metadata":{"name":"a"},"spec":{}}';
    expect(
      withPrecondition(write("update", object, { group: "demo.example", resource: "webapps" }), "9"),
    ).toBeUndefined();
    expect(
      withPrecondition(write("update", object, { group: "coordination.k8s.io", resource: "leases" }), "9"),
    ).toBeUndefined();
    // A patch of the same resource is fine: the server conditions every patch on the state it read.
    expect(
      withPrecondition(
        write("patch", '{"spec":{}}', { patchType: "merge", group: "demo.example", resource: "webapps" }),
        "9",
      ),
    ).toBeDefined();
    expect(
      withPrecondition(
        write("update", '{"metadata":{"name":"a"}}', { group: "apps", resource: "deployments" }),
        "9",
      ),
    ).toBeDefined();
  });

  it("sets it in a protobuf update, leaving every other byte of the object as it was", () => {
    const proto = protobufObject(
      meta([
        [1, "a"],
        [5, "uid-1"],
      ]),
    );
    const out = protobufWithResourceVersion(proto, "42");
    expect(out && protobufMetadata(out)).toEqual({ name: "a", uid: "uid-1", resourceVersion: "42" });
    // Replaced, not added twice; and the empty value clears it again.
    const twice = out && protobufWithResourceVersion(out, "43");
    expect(twice && protobufMetadata(twice)?.resourceVersion).toBe("43");
    const cleared = twice && protobufWithResourceVersion(twice, "");
    expect(cleared && protobufMetadata(cleared)?.resourceVersion).toBeUndefined();
    // Outside the metadata, the bytes are the same.
    const dataField = encodeLengthDelimited(
      2,
      Buffer.concat([encodeLengthDelimited(1, Buffer.from("k")), encodeLengthDelimited(2, Buffer.from("v"))]),
    );
    expect(proto.includes(dataField)).toBe(true);
    expect(out?.includes(dataField)).toBe(true);
    expect(
      withPrecondition({ verb: "update", ...CONFIGMAPS, body: proto }, "42")?.equals(out ?? Buffer.alloc(0)),
    ).toBe(true);
  });

  it("edits metadata only inside a Kubernetes protobuf envelope", () => {
    expect(editProtobufMetadata(Buffer.from("{}"), (m) => m)).toBeUndefined();
  });

  const cbor: WriteBody = {
    verb: "patch",
    patchType: "apply",
    ...CONFIGMAPS,
    body: Buffer.from([0xd9, 0xd9, 0xf7]),
  };
  it.each([
    ["CBOR apply", cbor],
    ["an unknown patch type", body("patch", { a: 1 }, "unknown")],
    ["a number JavaScript would round", write("update", '{"metadata":{},"spec":{"n":12345678901234567890}}')],
    ["a decimal JavaScript would round", write("update", '{"metadata":{},"spec":{"n":12345678901234.567}}')],
    ["a number that overflows", write("update", '{"metadata":{},"spec":{"n":1e400}}')],
    ["a number written another way", write("patch", '{"spec":{"n":1.0}}', { patchType: "merge" })],
    ["a merge patch that is not an object", body("patch", null, "merge")],
    ["a create", body("create", { metadata: {} })],
  ])("refuses %s", (_name, write) => {
    expect(withPrecondition(write, "9")).toBeUndefined();
  });
});
