#!/usr/bin/env bash
# Builds act (nektos/act), the local runner test/act uses to run this
# repository's workflows, from its Go module into the kit's cache (once per
# version) and prints the binary's path. The release is pinned here; go.sum of
# the module proxy's answer is checked by the go command against the checksum
# database as for any module.
set -euo pipefail
ACT_VERSION=v0.2.89
cache_root=${RECONCILE_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reconcile-conformance}
out=$cache_root/tools/act-$ACT_VERSION
if [[ ! -x $out/act ]]; then
  echo "act: building $ACT_VERSION from its Go module into $out" >&2
  GOBIN=$out go install "github.com/nektos/act@$ACT_VERSION"
fi
echo "$out/act"
