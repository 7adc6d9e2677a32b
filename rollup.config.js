import commonjs from "@rollup/plugin-commonjs";
import json from "@rollup/plugin-json";
import { nodeResolve } from "@rollup/plugin-node-resolve";
import typescript from "@rollup/plugin-typescript";

// One self-contained file per entry point, committed in dist/: the action
// runs dist/ without `npm install`, and `npx` gets a CLI that starts fast.
// Entry points: the CLI, and the Action's main and post steps (action.yml),
// each bundled on its own (no shared chunks whose names change with them).
/** @type {(name: string, input: string, external?: string[]) => import("rollup").RollupOptions} */
const bundle = (name, input, external = []) => ({
  input: { [name]: input },
  // Node built-ins stay imports; the resolver does not know the newest (node:sqlite).
  external: [/^node:/, ...external],
  output: {
    dir: "dist",
    format: "es",
    entryFileNames: "[name].js",
    inlineDynamicImports: true,
    // Dependencies load some built-ins with require() inside try/catch (undici's
    // http2); the commonjs plugin leaves those calls as they are, so an ES module
    // bundle must provide a real require or they silently fall back.
    intro:
      'import { createRequire as __rcCreateRequire } from "node:module";\nconst require = __rcCreateRequire(import.meta.url);',
  },
  plugins: [
    typescript({ noEmit: false, outDir: "dist", rootDir: ".", declaration: false, include: ["src/**/*.ts"] }),
    nodeResolve({ preferBuiltins: true, exportConditions: ["node"] }),
    commonjs(),
    json(),
  ],
  onwarn(warning, warn) {
    // Dependencies use `this` at module scope and circular imports; both are harmless in Node.
    if (warning.code === "CIRCULAR_DEPENDENCY" || warning.code === "THIS_IS_UNDEFINED") return;
    warn(warning);
  },
});

// The CLI is two bundles: cli.js checks the Node version with nothing imported yet, then loads
// cli-main.js (kept as a dynamic import, not inlined), whose imports an older Node could not link.
export default [
  bundle("cli", "src/cli.ts", ["./cli-main.js"]),
  bundle("cli-main", "src/cli-main.ts"),
  bundle("index", "src/index.ts"),
  bundle("post", "src/post.ts"),
];
