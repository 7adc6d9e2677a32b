#!/usr/bin/env bash
# The project's test command: setup (fast when warm), static checks, a check
# that the committed bundle matches the sources, then every test: unit tests
# and tests against real kwok clusters.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh

echo "test: typecheck, lint, format"
npm run --silent typecheck
npm run --silent lint

echo "test: dist/ matches src/"
npm run --silent build >/dev/null
if ! git diff --quiet -- dist; then
  echo "test: dist/ is out of date with src/: run 'npm run build' and commit dist/" >&2
  git diff --stat -- dist >&2
  exit 1
fi

results=$(mktemp)
trap 'rm -f "$results"' EXIT
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json="$results" || status=$?
# vitest's own summary is not one CI reads; print the plain closing line too.
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`vitest: ${r.numPassedTests} passed, ${r.numFailedTests} failed`);
' "$results" || echo "vitest: 0 passed, 1 failed"
exit "$status"
