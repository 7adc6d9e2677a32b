// The Action's main step (action.yml: runs.main -> dist/index.js): main.ts does the work.
import { run } from "./main.js";

await run();
