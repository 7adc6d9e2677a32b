#!/usr/bin/env bash
# Builds the Kubernetes binaries the kwok provider runs, from Go modules, into
# a versioned cache directory. Each subdirectory here is a Go module whose
# go.mod pins one upstream release and lists the commands to build as `tool`
# directives; go.sum makes the build reproducible.
#
# Usage: hack/kube-binaries/build.sh            build if missing or stale
#        hack/kube-binaries/build.sh --print-dir print the output directory
#
# Environment:
#   RECONCILE_CONFORMANCE_KUBE_BIN_DIR  output directory
#       (default: $RECONCILE_CONFORMANCE_CACHE/kube/v1.35.4)
#   RECONCILE_CONFORMANCE_CACHE         cache root
#       (default: ${XDG_CACHE_HOME:-$HOME/.cache}/reconcile-conformance)
set -euo pipefail

KUBE_VERSION=v1.35.4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${RECONCILE_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reconcile-conformance}
out=${RECONCILE_CONFORMANCE_KUBE_BIN_DIR:-$cache_root/kube/$KUBE_VERSION}

if [[ ${1:-} == --print-dir ]]; then
  echo "$out"
  exit 0
fi

binaries=(kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok kwokctl)

# sha256sum on Linux, shasum on macOS (which has no sha256sum); both print "<hex>  -".
sha256() {
  if command -v sha256sum >/dev/null; then sha256sum; else shasum -a 256; fi
}

# The stamp identifies exactly what was built: the pinned modules, this
# script and the Go toolchain. A binary set with a different stamp is stale.
stamp() {
  (
    cd "$here"
    cat build.sh */go.mod */go.sum
    go version
  ) | sha256 | cut -d' ' -f1
}

want=$(stamp)
stamp_file=$out/.build-stamp
complete=true
for b in "${binaries[@]}"; do
  [[ -x $out/$b ]] || complete=false
done
if $complete && [[ -f $stamp_file && $(cat "$stamp_file") == "$want" ]]; then
  echo "kube binaries: up to date in $out"
  exit 0
fi

echo "kube binaries: building Kubernetes $KUBE_VERSION, etcd and kwok into $out"
echo "kube binaries: a cold build takes a long time (tens of minutes on 2 cores); later runs reuse Go's build cache"
mkdir -p "$out"
rm -f "$stamp_file"

# Kubernetes reads its version from variables set at link time; without them
# /version reports v0.0.0-master and clients and kwokctl misjudge the server.
kube_pkgs=(k8s.io/client-go/pkg/version k8s.io/component-base/version)
minor=${KUBE_VERSION#v1.}
minor=${minor%%.*}
kube_ldflags="-s -w"
for p in "${kube_pkgs[@]}"; do
  kube_ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  kube_ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

build_module() { # module, ldflags, expected binaries...
  local module=$1 ldflags=$2
  shift 2
  local started=$SECONDS
  echo "kube binaries: $module: building $* ..."
  if ! (cd "$here/$module" && go build -trimpath -ldflags "$ldflags" -o "$out/" tool) >"$logs/$module.log" 2>&1; then
    echo "kube binaries: $module failed to build:" >&2
    tail -n 40 "$logs/$module.log" >&2
    return 1
  fi
  if [[ $module == etcd ]]; then
    mv -f "$out/server" "$out/etcd" # the etcd main package is the module root, named "server"
  fi
  for b in "$@"; do
    [[ -x $out/$b ]] || { echo "kube binaries: $module did not produce $b" >&2; return 1; }
  done
  echo "kube binaries: $module done in $((SECONDS - started))s"
}

# The three modules do not depend on each other: build them at the same time.
# Each go build alone leaves the cores idle while it links and between
# packages that wait for each other; together they keep both busy.
build_module etcd "-s -w" etcd &
etcd_pid=$!
build_module kwok "-s -w" kwok kwokctl &
kwok_pid=$!
build_module kubernetes "$kube_ldflags" kube-apiserver kube-controller-manager kube-scheduler kubectl &
kubernetes_pid=$!
failed=0
for pid in $etcd_pid $kwok_pid $kubernetes_pid; do
  wait "$pid" || failed=1
done
[[ $failed == 0 ]] || exit 1

version=$("$out/kube-apiserver" --version)
if [[ $version != "Kubernetes $KUBE_VERSION" ]]; then
  echo "kube binaries: kube-apiserver reports '$version', expected 'Kubernetes $KUBE_VERSION'" >&2
  exit 1
fi
echo "$want" >"$stamp_file"
echo "kube binaries: ready in $out"
