#!/usr/bin/env bash
# Prepares this checkout on a fresh machine, and does nothing slow twice:
#   1. Node.js 24 (from the npm registry when the machine's Node is older)
#   2. npm dependencies (npm ci, skipped while package-lock.json is unchanged)
#   3. Kubernetes v1.35.4, etcd and kwok binaries built from Go modules into
#      the cache (hack/kube-binaries/build.sh; needs Go)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/node24.sh
rc_ensure_node
echo "setup: node $(node --version), npm $(npm --version)"

lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ ! -f node_modules/.rc-lock-hash || $(cat node_modules/.rc-lock-hash) != "$lock_hash" ]]; then
  echo "setup: installing npm dependencies"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_hash" >node_modules/.rc-lock-hash
else
  echo "setup: npm dependencies up to date"
fi

if ! command -v go >/dev/null; then
  [[ -x /usr/local/go/bin/go ]] && export PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null || {
  echo "setup: Go is needed to build the Kubernetes binaries (hack/kube-binaries/build.sh) and is not on PATH" >&2
  exit 1
}
bash hack/kube-binaries/build.sh
echo "setup: example operator at $(bash examples/webapp-operator/build.sh)"
