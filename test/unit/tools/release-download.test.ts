import { describe, expect, it } from "vitest";
import { unreachableReason } from "../../../src/tools/release-download.js";

describe("unreachableReason", () => {
  const socketError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code });
  const fetchFailed = (cause: unknown) => new TypeError("fetch failed", { cause });

  it.each<[string, unknown, string | undefined]>([
    ["connection refused", fetchFailed(socketError("ECONNREFUSED")), "ECONNREFUSED"],
    ["an unknown host", fetchFailed(socketError("ENOTFOUND")), "ENOTFOUND"],
    ["a DNS server that does not answer", fetchFailed(socketError("EAI_AGAIN")), "EAI_AGAIN"],
    [
      "undici's connect timeout",
      fetchFailed(socketError("UND_ERR_CONNECT_TIMEOUT")),
      "UND_ERR_CONNECT_TIMEOUT",
    ],
    ["no route", fetchFailed(socketError("EHOSTUNREACH")), "EHOSTUNREACH"],
    [
      "every address of a host refused (happy eyeballs)",
      fetchFailed(
        new AggregateError([socketError("ECONNREFUSED"), socketError("ENETUNREACH")], "all failed"),
      ),
      "ECONNREFUSED",
    ],
    ["a bad certificate", fetchFailed(socketError("CERT_HAS_EXPIRED")), undefined],
    ["a socket closed by the other side", fetchFailed(socketError("UND_ERR_SOCKET")), undefined],
    ["an error without a code", new Error("boom"), undefined],
    ["a thrown string", "ECONNREFUSED", undefined],
  ])("%s", (_case, error, expected) => {
    expect(unreachableReason(error)).toBe(expected);
  });

  it("survives a cause cycle", () => {
    const first = new Error("first");
    const second = new Error("second", { cause: first });
    Object.assign(first, { cause: second });
    expect(unreachableReason(first)).toBeUndefined();
  });
});
