#!/usr/bin/env bash
# Prepares this checkout on a fresh machine, and does nothing slow twice:
#   - Kubernetes v1.35.4, etcd and kwok binaries built from Go modules into
#     the cache (hack/kube-binaries/build.sh; needs Go), and the example
#     operator (examples/webapp-operator/build.sh): Go builds, started first
#     and run in the background, since they take the longest
#   - actionlint, the workflow linter the tests use (hack/actionlint/build.sh)
#   - meanwhile Node.js 24 (from the npm registry when the machine's Node is
#     older) and the npm dependencies (npm ci, skipped while package-lock.json
#     is unchanged), which mostly wait on the network
# Sourced by demo.sh and test.sh (it leaves Node 24 on their PATH).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/node24.sh

if ! command -v go >/dev/null; then
  [[ -x /usr/local/go/bin/go ]] && export PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null || {
  echo "setup: Go is needed to build the Kubernetes binaries (hack/kube-binaries/build.sh) and is not on PATH" >&2
  exit 1
}
rc_setup_started=$SECONDS
rc_operator_path=$(mktemp)
bash hack/kube-binaries/build.sh &
rc_kube_pid=$!
bash examples/webapp-operator/build.sh >"$rc_operator_path" &
rc_operator_pid=$!
# The workflow linter the tests run on .github/workflows (seconds; once per machine).
bash hack/actionlint/build.sh >/dev/null &
rc_actionlint_pid=$!

rc_ensure_node
echo "setup: node $(node --version), npm $(npm --version)"
rc_lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ ! -f node_modules/.rc-lock-hash || $(cat node_modules/.rc-lock-hash) != "$rc_lock_hash" ]]; then
  echo "setup: installing npm dependencies"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$rc_lock_hash" >node_modules/.rc-lock-hash
else
  echo "setup: npm dependencies up to date"
fi

rc_setup_failed=0
wait "$rc_kube_pid" || rc_setup_failed=1
wait "$rc_operator_pid" || rc_setup_failed=1
wait "$rc_actionlint_pid" || rc_setup_failed=1
[[ $rc_setup_failed == 0 ]] && echo "setup: example operator at $(cat "$rc_operator_path")"
rm -f "$rc_operator_path"
[[ $rc_setup_failed == 0 ]] || { echo "setup: a build failed (above)" >&2; exit 1; }
echo "setup: ready in $((SECONDS - rc_setup_started))s"
