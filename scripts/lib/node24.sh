# Sourced, not run: puts a Node.js of the major in .node-version first on
# PATH. Machines that ship an older Node get the official binary from the
# registry package node-<os>-<arch>, installed under its own prefix in the
# cache (never in node_modules, which npm prunes).
#
# Environment: RECONCILE_CONFORMANCE_CACHE (default ~/.cache/reconcile-conformance)

rc_repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rc_cache_root=${RECONCILE_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reconcile-conformance}
rc_node_major=$(tr -d ' \nv' <"$rc_repo_root/.node-version")

rc_node_major_of() { "$1" --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/'; }

rc_ensure_node() {
  local current
  current=$(command -v node >/dev/null && rc_node_major_of node || echo 0)
  if [[ $current == "$rc_node_major" ]]; then
    return 0
  fi
  local os arch
  os=$(uname -s | tr '[:upper:]' '[:lower:]')
  case $(uname -m) in x86_64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
  local pkg=node-$os-$arch
  local prefix=$rc_cache_root/node/$rc_node_major
  local bin=$prefix/node_modules/$pkg/bin
  if [[ $(rc_node_major_of "$bin/node") != "$rc_node_major" ]]; then
    echo "node: this machine has Node ${current:-none}; installing Node $rc_node_major into $prefix" >&2
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error "$pkg@$rc_node_major" >&2
  fi
  export PATH="$bin:$PATH"
  [[ $(rc_node_major_of node) == "$rc_node_major" ]] || {
    echo "node: could not put Node $rc_node_major on PATH (got $(node --version))" >&2
    return 1
  }
}
