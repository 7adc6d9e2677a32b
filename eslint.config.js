import { readdirSync } from "node:fs";
import js from "@eslint/js";
import tseslint from "typescript-eslint";

// A suite folder imports no other suite and not the runner: what checks share lives in
// src/suites/shared or the scenario layer (test/unit/architecture.test.ts checks the whole graph).
const suiteFolders = readdirSync(`${import.meta.dirname}/src/suites`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== "shared")
  .map((entry) => entry.name);
const suiteIsolation = suiteFolders.map((suite) => ({
  files: [`src/suites/${suite}/**/*.ts`],
  rules: {
    "no-restricted-imports": [
      "error",
      {
        patterns: [
          {
            regex: `^\\.\\./(${suiteFolders.filter((s) => s !== suite).join("|")})/`,
            message: "A suite never imports another suite: move what both need to src/suites/shared.",
          },
          { regex: "/runner/", message: "Suites are run by the runner; they never import it." },
        ],
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["*.js"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // `as` casts hide type errors; narrowing is expected instead (STYLE.md).
      "@typescript-eslint/consistent-type-assertions": [
        "error",
        { assertionStyle: "as", objectLiteralTypeAssertions: "never" },
      ],
      "no-restricted-properties": [
        "error",
        {
          object: "process",
          property: "exit",
          message: "Set process.exitCode and return; library code never exits.",
        },
      ],
    },
  },
  {
    files: ["*.js"],
    extends: [tseslint.configs.disableTypeChecked],
  },
  ...suiteIsolation,
);
