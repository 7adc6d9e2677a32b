#!/usr/bin/env bash
# Builds k8s.io/sample-controller v0.35.4 — the Kubernetes project's own
# example controller, a subject nobody here wrote — into the cache, unchanged,
# from the published Go module (the module's go.sum pins its dependencies).
# Links the module's sources to ./upstream, where the contract finds the
# module's own CRD and example object.
#   examples/sample-controller/build.sh    build if missing; print the binary's path
# Environment: RECONCILE_CONFORMANCE_CACHE (default ~/.cache/reconcile-conformance)
set -euo pipefail
MODULE=k8s.io/sample-controller
VERSION=v0.35.4
# The module zip's hash as the Go checksum database records it: a download
# with any other content is refused.
MODULE_SUM=h1:OMWonnLfbJlh6shvqbhAQB7tWzK+I6NHZxqHKaVKBcI=

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${RECONCILE_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reconcile-conformance}
out=$cache_root/examples/sample-controller/$VERSION
binary=$out/sample-controller
if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then export PATH="/usr/local/go/bin:$PATH"; fi

want=$({ cat "${BASH_SOURCE[0]}"; go version; } | sha256sum | cut -d' ' -f1)
if [[ -x $binary && -d $out/src && -f $out/.build-stamp && $(cat "$out/.build-stamp") == "$want" ]]; then
  ln -sfn "$out/src" "$here/upstream"
  echo "$binary"
  exit 0
fi

echo "sample-controller: downloading $MODULE@$VERSION" >&2
# Outside any module, so that only this exact version is asked for (listing
# the module's versions is not needed, and `go install` would need it).
download=$(cd / && go mod download -json "$MODULE@$VERSION")
dir=$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' <<<"$download")
sum=$(sed -n 's/^\t"Sum": "\(.*\)",$/\1/p' <<<"$download")
if [[ $sum != "$MODULE_SUM" ]]; then
  echo "sample-controller: $MODULE@$VERSION has hash '$sum', expected $MODULE_SUM: refusing to build it" >&2
  exit 1
fi

echo "sample-controller: building into $out" >&2
mkdir -p "$out"
rm -rf "$out/src" "$out/.build-stamp"
# The module cache is read-only; build a writable copy of it, as it is.
cp -R "$dir" "$out/src"
chmod -R u+w "$out/src"
(cd "$out/src" && go build -trimpath -o "$binary" .)
echo "$want" >"$out/.build-stamp"
ln -sfn "$out/src" "$here/upstream"
echo "$binary"
