#!/usr/bin/env bash
# The main job on the embedded default: set up, bring up a kwok cluster (real
# etcd, kube-apiserver, controller-manager and scheduler; simulated node), show
# that it works, and tear it down. It grows into the full conformance run on
# the bundled example operator as the suites land.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
bin_dir=$(bash hack/kube-binaries/build.sh --print-dir)
cli() { node dist/cli.js "$@"; }
name=demo-$$

echo
echo "== reconcile-conformance doctor"
cli doctor

echo
echo "== reconcile-conformance cluster create --provider kwok --name $name"
kubeconfig=$(cli cluster create --provider kwok --name "$name" | tail -n 1)
trap 'echo; echo "== reconcile-conformance cluster delete --name $name"; cli cluster delete --name "$name"' EXIT
kubectl() { "$bin_dir/kubectl" --kubeconfig "$kubeconfig" "$@"; }

echo
echo "== the cluster at work"
kubectl version
kubectl get nodes
kubectl create deployment demo --image=example.invalid/demo:1 --replicas=2
kubectl wait --for=condition=Available deployment/demo --timeout=60s
kubectl get deployment,replicaset,pods -o wide
