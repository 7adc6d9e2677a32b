#!/usr/bin/env bash
# The main job on the embedded default: set up, then run the conformance
# checks of the bundled example operator (examples/webapp-operator) on a kwok
# cluster the run starts and removes (real etcd, kube-apiserver,
# controller-manager and scheduler; a simulated node). The verdicts print as
# they come; the JSON report lands in ./reconcile-conformance-report/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
cli() { node dist/cli.js "$@"; }

echo
echo "== reconcile-conformance doctor"
cli doctor

echo
echo "== reconcile-conformance run --config examples/webapp-operator/reconcile-conformance.yaml"
cli run --config examples/webapp-operator/reconcile-conformance.yaml "$@"
