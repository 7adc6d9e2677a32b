#!/usr/bin/env bash
# The setup-node stand-in's step (see action.yml): find a Node of WANTED_NODE_VERSION's major on this machine,
# put its bin directory on GITHUB_PATH, write the node-version output.
set -euo pipefail
echo "setup-node stand-in: using a Node on this machine (nothing is downloaded; cache inputs ignored)"
want=${WANTED_NODE_VERSION#v}
want=${want%%.*}
if ! [[ $want =~ ^[0-9]+$ ]]; then
  echo "::error title=setup-node stand-in::node-version '$WANTED_NODE_VERSION' is not a version the stand-in understands (a major, e.g. 24 or 24.x); aliases and node-version-file are not supported"
  exit 1
fi
major_of() { "$1" --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/'; }
cache_root=${RECONCILE_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reconcile-conformance}
os=$(uname -s | tr '[:upper:]' '[:lower:]')
case $(uname -m) in x86_64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
candidates=()
on_path=$(command -v node || true)
[[ -n $on_path ]] && candidates+=("$on_path")
candidates+=("$cache_root/node/$want/node_modules/node-$os-$arch/bin/node")
for node in "${candidates[@]}"; do
  if [[ -x $node && $(major_of "$node") == "$want" ]]; then
    bin=$(dirname "$node")
    echo "$bin" >>"$GITHUB_PATH"
    echo "node-version=$("$node" --version)" >>"$GITHUB_OUTPUT"
    echo "setup-node stand-in: Node $("$node" --version) from $bin on PATH"
    exit 0
  fi
done
echo "::error title=setup-node stand-in::no Node $want on this machine (looked at: ${candidates[*]}); the stand-in does not download Node (scripts/setup.sh installs Node 24 into the cache)"
exit 1
