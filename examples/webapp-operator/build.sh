#!/usr/bin/env bash
# Builds the example operator into the cache, once per change of its sources.
#   examples/webapp-operator/build.sh              build if stale; print the binary's path
# Environment: RECONCILE_CONFORMANCE_CACHE (default ~/.cache/reconcile-conformance)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${RECONCILE_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reconcile-conformance}
out=$cache_root/examples/webapp-operator
binary=$out/webapp-operator

want=$(cd "$here" && { find . -name '*.go' -not -name '*_test.go' | sort | xargs cat; cat go.mod go.sum build.sh; go version; } | sha256sum | cut -d' ' -f1)
if [[ -x $binary && -f $out/.build-stamp && $(cat "$out/.build-stamp") == "$want" ]]; then
  echo "$binary"
  exit 0
fi
echo "webapp-operator: building into $out" >&2
mkdir -p "$out"
# Static (no cgo), like the image's build: hack/kind/operator-image.sh puts this very binary in an
# image for deployed mode on kind, and the tests' go vet and go test share its build cache.
(cd "$here" && CGO_ENABLED=0 go build -trimpath -o "$binary" .)
echo "$want" >"$out/.build-stamp"
echo "$binary"
