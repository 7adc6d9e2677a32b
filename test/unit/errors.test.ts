import { describe, expect, it } from "vitest";
import { describeError, withoutSecretValues } from "../../src/errors.js";

describe("Secret values in error messages", () => {
  it("leaves out the data of a Secret the API server echoes in a refusal, escaped or not", () => {
    const refusal = new Error(
      'PATCH /api/v1/namespaces/ns/secrets/web-auth: 422 Invalid: patch: Invalid value: "{\\"data\\":{\\"password\\":\\"cGFzcw==-drift\\"},\\"kind\\":\\"Secret\\"}": illegal base64 data',
    );
    const message = describeError(refusal);
    expect(message).not.toContain("cGFzcw");
    expect(message).toContain('\\"data\\":{…}');
    expect(message).toContain("illegal base64 data");
    expect(withoutSecretValues('{"kind":"Secret","stringData":{"token":"t0k3n"}}')).toBe(
      '{"kind":"Secret","stringData":{…}}',
    );
  });

  it.each([
    [
      "braces and quotes inside a value",
      '{"kind":"Secret","stringData":{"config":"{\\"a\\":\\"}s3cr3t{\\"}","b":"x"},"type":"Opaque"}',
      '{"kind":"Secret","stringData":{…},"type":"Opaque"}',
    ],
    [
      "JSON escaped twice",
      'update secrets/s: Invalid value: "{\\\\\\"data\\\\\\":{\\\\\\"password\\\\\\":\\\\\\"cGFzcw==\\\\\\"}}": bad',
      'update secrets/s: Invalid value: "{\\\\\\"data\\\\\\":{…}}": bad',
    ],
    [
      "a Go map as %v prints it",
      "create secrets/s: object {Type:Opaque Data:map[password:[112 97 115 115]] StringData:map[token:t0k3n]}",
      "create secrets/s: object {Type:Opaque Data:… (the rest of the message holds Secret values: left out)",
    ],
    [
      "a Go object as its String() prints it",
      "&Secret{ObjectMeta:{s  ns},Data:map[string][]byte{password: [112 97 115 115],},StringData:map[string]string{token: t0k3n,},Type:Opaque,}",
      "&Secret{ObjectMeta:{s  ns},Data:map[string][]byte… (the rest of the message holds Secret values: left out)",
    ],
    [
      "a value that ends in a backslash",
      'secrets "s": {"stringData":{"a":"x\\\\","b":"}leak1"}}',
      'secrets "s": {"stringData":{…}}',
    ],
    [
      "a value that ends in a backslash, escaped once",
      'secrets "s": "{\\"stringData\\":{\\"a\\":\\"x\\\\\\\\\\",\\"b\\":\\"}leak2\\"}}"',
      'secrets "s": "{\\"stringData\\":{…}}"',
    ],
    [
      "a map whose end cannot be found",
      '{"kind":"Secret","data":{"password":"cGFzcw==',
      '{"kind":"Secret","data":{…}',
    ],
  ])("leaves out Secret values: %s", (_name, message, expected) => {
    expect(withoutSecretValues(message)).toBe(expected);
  });

  it("keeps a message about anything else as it is", () => {
    const text = 'PUT /api/v1/namespaces/ns/configmaps/c: 422 Invalid: {"data":{"key":"value"}}';
    expect(withoutSecretValues(text)).toBe(text);
  });
});
