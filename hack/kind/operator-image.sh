#!/usr/bin/env bash
# Builds the example operator's image for deployed mode on kind, with no registry: the static
# binary examples/webapp-operator/build.sh leaves in the cache, in an image FROM scratch (nothing
# to pull), run as the same non-root user as the example's own Dockerfile. That Dockerfile stays
# the idiomatic one users copy (golang to build, distroless to run); it needs a registry, which
# this machine has not.
#
# Usage: hack/kind/operator-image.sh [TAG]   default webapp-operator:ci (the deployed contract's)
# Needs Docker (hack/kind/docker.sh). Prints the tag.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tag=${1:-webapp-operator:ci}
started=$SECONDS
binary=$(bash "$repo/examples/webapp-operator/build.sh")
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp "$binary" "$context/webapp-operator"
cat >"$context/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY webapp-operator /webapp-operator
USER 65532:65532
ENTRYPOINT ["/webapp-operator"]
DOCKERFILE
# The legacy builder: Debian's Docker client has no buildx; FROM scratch needs nothing it lacks.
DOCKER_BUILDKIT=0 docker build --quiet -t "$tag" "$context" >/dev/null
echo "operator image: $tag from $binary in $((SECONDS - started))s" >&2
echo "$tag"
