// The Action's post step (action.yml: runs.post -> dist/post.js): action/post.ts does the work.
import { runPost } from "./action/post.js";

await runPost();
