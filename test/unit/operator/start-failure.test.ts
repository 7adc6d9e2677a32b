import { describe, expect, it } from "vitest";
import { describeStartFailure, startFailureCause } from "../../../src/operator/start-failure.js";

const webhook =
  '2026-12-04T10:00:00Z\tERROR\tsetup\tproblem running manager\t{"error": "open /tmp/k8s-webhook-server/serving-certs/tls.crt: no such file or directory"}';

describe("startFailureCause", () => {
  it.each([
    {
      name: "kubebuilder with webhooks on and no certificate",
      log: ["INFO setup starting manager", webhook, "INFO shutting down"],
      line: webhook,
      hint: /^its webhook server has no serving certificate/,
    },
    {
      name: "a variable it needs (zap's JSON lines)",
      log: ['{"level":"info","msg":"starting"}', '{"level":"error","msg":"DATABASE_URL must be set"}'],
      line: '{"level":"error","msg":"DATABASE_URL must be set"}',
      hint: /^it needs an environment variable the run does not set/,
    },
    {
      name: "a variable named in prose",
      log: [
        "panic: environment variable OPERATOR_NAMESPACE is required",
        "goroutine 1 [running]:",
        "main.main()",
      ],
      line: "panic: environment variable OPERATOR_NAMESPACE is required",
      hint: /operator\.env/,
    },
    {
      name: "klog's error lines",
      log: [
        'E1204 10:00:00.000000    1 main.go:40] "unable to start manager" err="listen tcp :8080: bind: address already in use"',
      ],
      line: 'E1204 10:00:00.000000    1 main.go:40] "unable to start manager" err="listen tcp :8080: bind: address already in use"',
      hint: /^a port it binds is taken/,
    },
    {
      name: "a kind it watches and the cluster does not serve",
      log: ['ERROR controller-runtime.source no matches for kind "Database" in version "db.example.com/v1"'],
      line: 'ERROR controller-runtime.source no matches for kind "Database" in version "db.example.com/v1"',
      hint: /list every CRD it watches/,
    },
    {
      name: "an error the kit knows no hint for",
      log: ["starting", "failed to parse config.yaml: line 3: mapping values are not allowed here"],
      line: "failed to parse config.yaml: line 3: mapping values are not allowed here",
      hint: undefined,
    },
    {
      name: "no error line: the last line",
      log: ["starting", "  bye  ", ""],
      line: "bye",
      hint: undefined,
    },
    {
      // "ERROR" in capitals is no variable: no hint about variables.
      name: "an upper-case level word is not a variable",
      log: ["ERROR setup a field is required in the config file"],
      line: "ERROR setup a field is required in the config file",
      hint: undefined,
    },
  ])("$name", ({ log, line, hint }) => {
    const cause = startFailureCause(log);
    expect(cause.line).toBe(line);
    if (hint === undefined) expect(cause.hint).toBeUndefined();
    else expect(cause.hint).toMatch(hint);
  });

  it("quotes at most 300 characters of a line", () => {
    const cause = startFailureCause([`error: ${"x".repeat(400)}`]);
    expect(cause.line).toHaveLength(300);
    expect(cause.line?.endsWith("…")).toBe(true);
  });

  it("says so when the log is empty", () => {
    expect(startFailureCause([])).toEqual({});
    expect(describeStartFailure(startFailureCause(["", " "]))).toBe(": its log is empty");
  });

  it("describes the cause after the exit", () => {
    expect(describeStartFailure({ line: "boom: failed" })).toBe("; its log ends with: boom: failed");
    expect(describeStartFailure({ line: "boom: failed", hint: "do this" })).toBe(
      "; its log ends with: boom: failed — do this",
    );
  });
});
