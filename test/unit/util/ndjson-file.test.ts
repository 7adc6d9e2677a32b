import { mkdtemp, readdir, readFile, readlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { InfrastructureError } from "../../../src/errors.js";
import { NdjsonFile } from "../../../src/util/ndjson-file.js";

const lines = async (path: string) =>
  (await readFile(path, "utf8"))
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as unknown);

describe("NdjsonFile", () => {
  it("writes a burst of lines, and lines appended while it is being written, in order", async () => {
    const path = join(await mkdtemp(join(tmpdir(), "rc-ndjson-")), "log.ndjson");
    const file = new NdjsonFile(path, "the write log");
    for (let i = 0; i < 500; i++) file.append({ seq: i });
    await Promise.resolve(); // the first append's write may be under way now
    for (let i = 500; i < 1000; i++) file.append({ seq: i });
    await file.flush();
    expect(await lines(path)).toEqual(Array.from({ length: 1000 }, (_, i) => ({ seq: i })));
    file.append({ seq: 1000 });
    await file.flush();
    expect((await lines(path)).at(-1)).toEqual({ seq: 1000 });
  });

  it.runIf(process.platform === "linux")(
    "keeps the file open between appends and closes it at flush",
    async () => {
      const path = join(await mkdtemp(join(tmpdir(), "rc-ndjson-")), "log.ndjson");
      const openOnPath = async () =>
        (
          await Promise.all(
            (await readdir("/proc/self/fd")).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => "")),
          )
        ).filter((target) => target === path).length;
      const file = new NdjsonFile(path, "the read log");
      file.append({ seq: 1 });
      await new Promise((resolve) => setTimeout(resolve, 50)); // the write is done, the file still open
      file.append({ seq: 2 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await openOnPath()).toBe(1);
      await file.flush();
      expect(await openOnPath()).toBe(0);
      expect(await lines(path)).toEqual([{ seq: 1 }, { seq: 2 }]);
      // A line after the flush (a request answered while the proxy closed): written, and closed again.
      file.append({ seq: 3 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await openOnPath()).toBe(0);
      expect((await lines(path)).at(-1)).toEqual({ seq: 3 });
    },
  );

  it("reports a file it cannot write at flush, naming the file and what it holds", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rc-ndjson-"));
    const file = new NdjsonFile(join(dir, "missing", "log.ndjson"), "the watch events");
    file.append({ seq: 1 });
    const flushed = file.flush();
    await expect(flushed).rejects.toThrow(InfrastructureError);
    await expect(file.flush()).rejects.toThrow(/cannot write the watch events to .*missing\/log\.ndjson/);
  });
});
