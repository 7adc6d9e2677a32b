// The Action's main step (action.yml: runs.main -> dist/index.js).
import { runAction } from "./main.js";

await runAction();
