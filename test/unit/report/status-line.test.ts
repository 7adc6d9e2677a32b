import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { StatusLine } from "../../../src/report/status-line.js";

/** A stream that records every write, claiming to be a terminal when asked. */
function fakeStream(isTTY: boolean): Writable & { isTTY: boolean; columns: number; written: string[] } {
  const written: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      callback();
      return chunk;
    },
  }) as Writable & { isTTY: boolean; columns: number; written: string[] };
  stream.write = ((chunk: string) => {
    written.push(chunk);
    return true;
  }) as Writable["write"];
  return Object.assign(stream, { isTTY, columns: 40, written });
}

const CLEAR = "\r\x1b[2K";

describe("StatusLine", () => {
  it("stays off on a pipe, in CI and on a dumb terminal", () => {
    const clock = { now: () => 0 };
    expect(StatusLine.start(fakeStream(false), { clock, env: {} })).toBeUndefined();
    expect(StatusLine.start(fakeStream(true), { clock, env: { CI: "true" } })).toBeUndefined();
    expect(StatusLine.start(fakeStream(true), { clock, env: { TERM: "dumb" } })).toBeUndefined();
  });

  it("draws the step with its time, clears it before any other write and redraws it below", () => {
    let now = 0;
    const stream = fakeStream(true);
    const status = StatusLine.start(stream, { clock: { now: () => now }, env: {}, intervalMs: 60_000 });
    expect(status).toBeDefined();
    status?.set("converging");
    expect(stream.written.at(-1)).toBe("⠋ converging (0s)");

    now = 3_500;
    status?.tick();
    expect(stream.written.slice(-2)).toEqual([CLEAR, "⠙ converging (3s)"]);

    // Another writer (the logger): the spinner goes, the line is written, the spinner comes back.
    stream.write("operator: started run 2\n");
    expect(stream.written.slice(-3)).toEqual([CLEAR, "operator: started run 2\n", "⠙ converging (3s)"]);

    // Never drawn after an unfinished line of someone else's.
    stream.write("half a line");
    status?.tick();
    expect(stream.written.slice(-2)).toEqual([CLEAR, "half a line"]);

    status?.stop();
    stream.write("\n");
    expect(stream.written.at(-1)).toBe("\n");
  });

  it("takes 80 columns when the terminal reports none", () => {
    const stream = Object.assign(fakeStream(true), { columns: 0 });
    const status = StatusLine.start(stream, { clock: { now: () => 0 }, env: {}, intervalMs: 60_000 });
    status?.set("converging");
    expect(stream.written.at(-1)).toBe("⠋ converging (0s)");
    status?.stop();
  });

  it("fits the terminal's width, and gives the stream back when stopped", () => {
    const stream = fakeStream(true);
    const write: unknown = Object.getOwnPropertyDescriptor(stream, "write")?.value;
    const status = StatusLine.start(stream, { clock: { now: () => 0 }, env: {}, intervalMs: 60_000 });
    status?.set("drift/managed-field: perturbing Deployment/hello spec.template.spec.containers[0].image");
    const line = stream.written.at(-1) ?? "";
    expect(line.length).toBeLessThanOrEqual(39);
    expect(line.endsWith("…")).toBe(true);
    status?.stop();
    expect(stream.written.at(-1)).toBe(CLEAR);
    expect(Object.getOwnPropertyDescriptor(stream, "write")?.value).toBe(write);
  });
});
