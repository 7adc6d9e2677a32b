#!/usr/bin/env bash
# The project's test command: setup (fast when warm), static checks, a check
# that the committed bundle matches the sources, then every test: unit tests
# and tests against real kwok clusters.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
# A subject only the tests use (the demo does not need it, so setup does not build it).
echo "test: k8s.io/sample-controller at $(bash examples/sample-controller/build.sh)"

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

echo "test: go vet and gofmt (examples/webapp-operator)"
(cd examples/webapp-operator && go vet ./...)
unformatted=$(gofmt -l examples)
[[ -z $unformatted ]] || { echo "test: gofmt needed: $unformatted" >&2; exit 1; }

results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
status=0

echo "test: go test (the example operator against a real kwok cluster)"
(cd examples/webapp-operator && go test -v -count=1 ./...) >"$results/go.log" 2>&1 || status=$?
grep -E '^(=== RUN|\s*--- (PASS|FAIL)|(ok|FAIL|PASS)\b)' "$results/go.log" | grep -v '^=== RUN' || true
if [[ $status -ne 0 ]]; then cat "$results/go.log"; fi
go_passed=$(grep -cE '^\s*--- PASS' "$results/go.log" || true)
go_failed=$(grep -cE '^\s*--- FAIL' "$results/go.log" || true)

echo "test: vitest (unit tests, and cluster tests against real kwok clusters)"
npx vitest run --reporter=default --reporter=json --outputFile.json="$results/vitest.json" || status=$?
read -r vitest_passed vitest_failed < <(node -e '
  try {
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(r.numPassedTests, r.numFailedTests);
  } catch { console.log(0, 1); }
' "$results/vitest.json")

echo "go test: $go_passed passed, $go_failed failed"
echo "vitest: $vitest_passed passed, $vitest_failed failed"
# The plain closing line CI reads (neither runner's own summary is one it knows).
echo "tests: $((go_passed + vitest_passed)) passed, $((go_failed + vitest_failed)) failed"
exit "$status"
