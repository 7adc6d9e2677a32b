import { describe, expect, it } from "vitest";
import { ApiError, isAlreadyExists, isConflict, isNotFound } from "../../../src/kube/api-errors.js";

const status = (code: number, reason: string) =>
  JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    reason,
    code,
    message: `${reason}!`,
  });

describe("API error predicates", () => {
  it.each([
    ["a stale write", ApiError.fromResponse("PUT", "/x", 409, status(409, "Conflict")), true, false, false],
    [
      "a taken name",
      ApiError.fromResponse("POST", "/x", 409, status(409, "AlreadyExists")),
      false,
      true,
      false,
    ],
    [
      "a missing object",
      ApiError.fromResponse("GET", "/x", 404, status(404, "NotFound")),
      false,
      false,
      true,
    ],
    ["a server error", ApiError.fromResponse("GET", "/x", 500, "oops"), false, false, false],
    ["client-node's exception shape", { code: 409, body: status(409, "Conflict") }, true, false, false],
    ["a plain error", new Error("409"), false, false, false],
    ["not an error at all", "409", false, false, false],
  ])("%s", (_, error, conflict, exists, notFound) => {
    expect(isConflict(error)).toBe(conflict);
    expect(isAlreadyExists(error)).toBe(exists);
    expect(isNotFound(error)).toBe(notFound);
  });

  it("puts method, path, code, reason and the server's message in the text", () => {
    const error = ApiError.fromResponse(
      "PUT",
      "/api/v1/namespaces/a/configmaps/b",
      409,
      status(409, "Conflict"),
    );
    expect(error.message).toBe("PUT /api/v1/namespaces/a/configmaps/b: 409 Conflict: Conflict!");
    expect(error.reason).toBe("Conflict");
  });
});
