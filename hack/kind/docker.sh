#!/usr/bin/env bash
# Makes a Docker engine usable for kind on this kind of machine (Debian, root,
# no systemd running, no container registry, a capability bounding set
# without CAP_SYS_RESOURCE). Idempotent: every step checks first, so a second
# call only confirms that dockerd answers.
#
#   1. apt-installs docker.io (20.10, with Debian's containerd and runc), jq
#      (the runc wrapper needs it) and debootstrap (node-image.sh needs it),
#      if any is missing
#   2. installs the runc wrapper (hack/kind/runc-wrapper.sh) as
#      $RUNC_WRAPPER, see that file for why
#   3. starts dockerd in the background with the wrapper as its default
#      runtime, logging to $DOCKERD_LOG, unless a dockerd already answers
#   4. waits until `docker info` answers
#
# Usage: hack/kind/docker.sh
#
# Environment:
#   RECONCILE_CONFORMANCE_DOCKERD_LOG  dockerd's log (default: /tmp/reconcile-conformance-dockerd.log)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUNC_WRAPPER=/usr/local/bin/reconcile-conformance-runc
RUNTIME_NAME=rc-runc
DOCKERD_LOG=${RECONCILE_CONFORMANCE_DOCKERD_LOG:-/tmp/reconcile-conformance-dockerd.log}

step_started=$SECONDS
step() { echo "kind docker: $1 ($((SECONDS - step_started))s)"; step_started=$SECONDS; }
fail() { echo "kind docker: $*" >&2; exit 1; }

[[ $(id -u) == 0 ]] || fail "must run as root (it installs packages and starts dockerd)"

# 1. packages
packages=(docker.io jq debootstrap)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "kind docker: installing ${missing[*]} with apt ..."
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  step "installed ${missing[*]}"
else
  step "packages present (${packages[*]})"
fi

# 2. the runc wrapper
if ! cmp -s "$here/runc-wrapper.sh" "$RUNC_WRAPPER"; then
  install -m 0755 "$here/runc-wrapper.sh" "$RUNC_WRAPPER"
  step "installed runc wrapper at $RUNC_WRAPPER"
else
  step "runc wrapper up to date at $RUNC_WRAPPER"
fi

# 3. dockerd
if docker info >/dev/null 2>&1; then
  runtime=$(docker info --format '{{.DefaultRuntime}}')
  if [[ $runtime != "$RUNTIME_NAME" ]]; then
    fail "a dockerd is already running with default runtime '$runtime', not '$RUNTIME_NAME' ($RUNC_WRAPPER):" \
      "kind's privileged node containers will fail with 'unable to apply caps'. Stop it and run this script again."
  fi
  step "dockerd already running (default runtime $runtime)"
else
  # A dockerd that died leaves its pid file behind and then refuses to start.
  # A killed one may linger as a zombie for a while: that is not running.
  alive() { local state; state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [[ $state != [ZX] ]]; }
  for pidfile in /var/run/docker.pid /var/run/docker/containerd/containerd.pid; do
    if [[ -f $pidfile ]] && ! alive "$(cat "$pidfile")"; then
      rm -f "$pidfile"
    fi
  done
  running=false
  for pid in $(pgrep -x dockerd || true); do
    if alive "$pid"; then running=true; fi
  done
  if $running; then
    echo "kind docker: a dockerd process exists but does not answer yet; waiting for it"
  else
    echo "kind docker: starting dockerd (log: $DOCKERD_LOG)"
    # setsid: dockerd outlives this script and the caller's process group.
    setsid dockerd \
      --add-runtime "$RUNTIME_NAME=$RUNC_WRAPPER" \
      --default-runtime "$RUNTIME_NAME" \
      >>"$DOCKERD_LOG" 2>&1 </dev/null &
  fi
  # 4. wait for it
  for _ in $(seq 1 120); do
    docker info >/dev/null 2>&1 && break
    sleep 0.5
  done
  if ! docker info >/dev/null 2>&1; then
    tail -n 30 "$DOCKERD_LOG" >&2 || true
    fail "dockerd did not answer within 60s (log above: $DOCKERD_LOG)"
  fi
  step "dockerd up (default runtime $(docker info --format '{{.DefaultRuntime}}'))"
fi
echo "kind docker: ready: $(docker info --format 'server {{.ServerVersion}}, {{.Driver}}, cgroup {{.CgroupDriver}} v{{.CgroupVersion}}')"
