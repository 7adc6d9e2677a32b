#!/usr/bin/env bash
# Builds actionlint, the linter the tests run on .github/workflows, from its Go
# module into the kit's cache (once per version) and prints the binary's path.
# The release is pinned here; go.sum of the module proxy's answer is checked
# by the go command against the checksum database as for any module.
set -euo pipefail
ACTIONLINT_VERSION=v1.7.12
cache_root=${RECONCILE_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reconcile-conformance}
out=$cache_root/tools/actionlint-$ACTIONLINT_VERSION
if [[ ! -x $out/actionlint ]]; then
  echo "actionlint: building $ACTIONLINT_VERSION from its Go module into $out" >&2
  GOBIN=$out go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
fi
echo "$out/actionlint"
