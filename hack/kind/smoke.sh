#!/usr/bin/env bash
# Proves the offline kind setup end to end, printing the time of each step:
# creates a cluster from the node image, rolls out a Deployment of the
# preloaded pause image, builds a local image FROM scratch (no base pulled),
# `kind load`s it and runs a Pod of it, exports the cluster's logs, and
# deletes the cluster (also when a step fails).
#
# Usage: hack/kind/smoke.sh [cluster-name]   (default: rc-kind-smoke)
# Needs: hack/kind/docker.sh and hack/kind/node-image.sh (it runs both; each
# is quick when already done) and kubectl from hack/kube-binaries/build.sh.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
name=${1:-rc-kind-smoke}
started=$SECONDS
step_started=$SECONDS
step() { echo "kind smoke: $1 ($((SECONDS - step_started))s)"; step_started=$SECONDS; }

eval "$(bash "$here/node-image.sh" --print-env)"
kube_bin=$(bash "$here/../kube-binaries/build.sh" --print-dir)
export PATH="$kube_bin:$PATH"
command -v kubectl >/dev/null || { echo "kind smoke: no kubectl (run hack/kube-binaries/build.sh)" >&2; exit 1; }
step "kind and $RECONCILE_CONFORMANCE_KIND_NODE_IMAGE ready"

work=$(mktemp -d)
kubeconfig=$work/kubeconfig
cleanup() {
  kind delete cluster --name "$name" --kubeconfig "$kubeconfig" >/dev/null 2>&1 || true
  docker rmi reconcile-conformance/kind-smoke:local >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
k() { kubectl --kubeconfig "$kubeconfig" "$@"; }

kind create cluster --name "$name" --image "$RECONCILE_CONFORMANCE_KIND_NODE_IMAGE" \
  --kubeconfig "$kubeconfig" --wait 120s
step "cluster $name created"

k create deployment pause --image=registry.k8s.io/pause:3.10.1 >/dev/null
k rollout status deployment/pause --timeout=120s >/dev/null
step "Deployment of the preloaded registry.k8s.io/pause:3.10.1 available"

# A local image from a static binary, FROM scratch: nothing to pull.
cache_root=${RECONCILE_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reconcile-conformance}
cp "$cache_root/kind-node/v1.35.4/bin/pause" "$work/pause"
printf 'FROM scratch\nCOPY pause /pause\nUSER 65532:65532\nENTRYPOINT ["/pause"]\n' >"$work/Dockerfile"
DOCKER_BUILDKIT=0 docker build -q -t reconcile-conformance/kind-smoke:local "$work" >/dev/null 2>"$work/build.log" \
  || { cat "$work/build.log" >&2; exit 1; }
kind load docker-image reconcile-conformance/kind-smoke:local --name "$name" >/dev/null
k run local-image --image=reconcile-conformance/kind-smoke:local --image-pull-policy=Never >/dev/null
k wait pod/local-image --for=condition=Ready --timeout=60s >/dev/null
step "local image built FROM scratch, loaded with kind load, its Pod Ready"

kind export logs "$work/logs" --name "$name" >/dev/null 2>&1
[[ -s $work/logs/$name-control-plane/kubelet.log ]] || { echo "kind smoke: kind export logs wrote no kubelet.log" >&2; exit 1; }
step "kind export logs wrote $(find "$work/logs" -type f | wc -l) files"

kind delete cluster --name "$name" --kubeconfig "$kubeconfig" >/dev/null 2>&1
if docker ps -a --format '{{.Names}}' | grep -qx "$name-control-plane"; then
  echo "kind smoke: the node container is still there after kind delete cluster" >&2
  exit 1
fi
step "cluster deleted"
echo "kind smoke: passed in $((SECONDS - started))s"
