#!/usr/bin/env bash
# The project's test command: setup (fast when warm), static checks, a check
# that the committed bundle matches the sources, then every test: unit tests,
# tests against real kwok clusters, against kind clusters, and the
# repository's workflows under a real runner (act).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
# A subject only the tests use (the demo does not need it, so setup does not build it).
echo "test: k8s.io/sample-controller at $(bash examples/sample-controller/build.sh)"

# Test infrastructure of this machine kind, not of the product (hack/kind/README.md,
# test/act/README.md): a Docker engine able to run kind's privileged nodes, a kind node image
# assembled with no registry (cached: slow only once per machine), the example operator's image
# for deployed mode, and act. On a new machine that is about 5 minutes of Go builds and package
# downloads, so it runs in the background beside the static checks below (typecheck, lint and the
# bundle are one core each); its output shows when it is done, and a failure stops the tests.
echo "test: kind (Docker, kind, the node image, the operator's image) and act, in the background"
kind_env=$(mktemp)
kind_log=$(mktemp)
(
  started=$SECONDS
  bash hack/kind/docker.sh
  bash hack/kind/node-image.sh --print-env >"$kind_env"
  bash hack/kind/operator-image.sh >/dev/null
  echo "test: act at $(bash hack/act/build.sh)"
  echo "test: kind and act ready in $((SECONDS - started))s"
) >"$kind_log" 2>&1 &
kind_pid=$!

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

kind_status=0
wait "$kind_pid" || kind_status=$?
cat "$kind_log"
[[ $kind_status == 0 ]] || { echo "test: preparing kind and act failed (above)" >&2; exit 1; }
eval "$(cat "$kind_env")"
rm -f "$kind_env" "$kind_log"

echo "test: go vet and gofmt (examples/webapp-operator)"
# Without cgo and with -trimpath, as examples/webapp-operator/build.sh builds it: one build cache
# for all three (without -trimpath every package was compiled again: go vet took 107 s on a new
# machine, 26 s with it).
(cd examples/webapp-operator && CGO_ENABLED=0 go vet -trimpath ./...)
unformatted=$(gofmt -l examples)
[[ -z $unformatted ]] || { echo "test: gofmt needed: $unformatted" >&2; exit 1; }

results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
status=0

echo "test: go test (the example operator against a real kwok cluster)"
(cd examples/webapp-operator && CGO_ENABLED=0 go test -trimpath -v -count=1 ./...) >"$results/go.log" 2>&1 || status=$?
grep -E '^(=== RUN|\s*--- (PASS|FAIL)|(ok|FAIL|PASS)\b)' "$results/go.log" | grep -v '^=== RUN' || true
if [[ $status -ne 0 ]]; then cat "$results/go.log"; fi
go_passed=$(grep -cE '^\s*--- PASS' "$results/go.log" || true)
go_failed=$(grep -cE '^\s*--- FAIL' "$results/go.log" || true)

# Four runs, one after another: the tests without a cluster and the kwok cluster files (two files
# at a time, vitest.config.ts says why), then the kill matrix, whose clusters side by side keep
# every core busy, then kind clusters and the workflows under act (kwok clusters, shards side by
# side), which are heavy: a run beside the kwok cluster tests would slow both into timeouts.
vitest_passed=0
vitest_failed=0
for stage in "unit process cluster" matrix kind act; do
  echo "test: vitest, $stage"
  projects=()
  for project in $stage; do projects+=(--project "$project"); done
  json="$results/vitest-${stage// /-}.json"
  stage_started=$SECONDS
  npx vitest run "${projects[@]}" --reporter=default --reporter=json --outputFile.json="$json" || status=$?
  read -r passed failed < <(node -e '
    try {
      const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      console.log(r.numPassedTests, r.numFailedTests);
    } catch { console.log(0, 1); }
  ' "$json")
  echo "test: vitest, $stage: $passed passed, $failed failed in $((SECONDS - stage_started))s"
  vitest_passed=$((vitest_passed + passed))
  vitest_failed=$((vitest_failed + failed))
done

echo "go test: $go_passed passed, $go_failed failed"
echo "vitest: $vitest_passed passed, $vitest_failed failed"
# The plain closing line CI reads (neither runner's own summary is one it knows).
echo "tests: $((go_passed + vitest_passed)) passed, $((go_failed + vitest_failed)) failed"
exit "$status"
