import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { RunReport } from "./report-model.js";

/** Writes the report as `report.json` in `directory`; returns its path. */
export async function writeJsonReport(report: RunReport, directory: string): Promise<string> {
  await mkdir(directory, { recursive: true });
  const path = join(directory, "report.json");
  await writeFile(path, `${JSON.stringify(report, null, 2)}\n`);
  return path;
}
