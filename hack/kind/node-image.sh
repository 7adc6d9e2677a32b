#!/usr/bin/env bash
# Ensures kind and a kind node image exist on this machine, offline: no image
# is pulled from any registry. `kind build node-image` cannot work here (it
# pulls its base image and every component image), so this script assembles
# the same kind of image itself, the way kind's builder lays it out:
#
#   - kind v0.33.0, built from its Go module (hack/kind/kind) into the cache
#   - node binaries built from Go modules into the cache: kubelet, kubeadm,
#     kube-proxy (hack/kind/kubernetes, the same Kubernetes release as
#     hack/kube-binaries), crictl (hack/kind/crictl), CoreDNS
#     (hack/kind/coredns) and pause (hack/kind/pause); kube-apiserver,
#     kube-controller-manager, kube-scheduler, kubectl and etcd come from
#     hack/kube-binaries/build.sh (the project's setup builds them)
#   - a Debian bookworm root file system from debootstrap (systemd,
#     containerd, runc, CNI plugins, iptables, ...), with the files in
#     hack/kind/node/rootfs on top, imported into Docker
#   - the images kubeadm needs (`kubeadm config images list`), each a small
#     local base plus one binary, imported into the node's containerd
#   - all of it committed as $IMAGE and saved to a tarball in the cache
#
# Each step is skipped when its result is present and its stamp (what built
# it) matches. The image in Docker carries the stamp as a label; a stale one
# is rebuilt, a current one is used as is, and a current cached tarball is
# `docker load`ed. Runs hack/kind/docker.sh first (Docker must answer).
#
# Usage: hack/kind/node-image.sh              ensure kind and the image
#        hack/kind/node-image.sh --print-env  the same, then print
#            `export PATH=...` (kind's directory first) and
#            `export RECONCILE_CONFORMANCE_KIND_NODE_IMAGE=...` for eval
#   Progress goes to stderr; stdout has only the result.
#
# Environment:
#   RECONCILE_CONFORMANCE_CACHE  cache root
#       (default: ${XDG_CACHE_HOME:-$HOME/.cache}/reconcile-conformance)
set -euo pipefail

KUBE_VERSION=v1.35.4
KIND_VERSION=v0.33.0
CRICTL_VERSION=v1.34.0
IMAGE=kindest/node:$KUBE_VERSION
STAMP_LABEL=dev.reconcile-conformance.kind-node-stamp
DEBIAN_SUITE=bookworm
# Debian packages of the node (kind's base image has about the same).
NODE_PACKAGES=(systemd systemd-sysv containerd runc containernetworking-plugins
  iptables nftables iproute2 ethtool conntrack kmod procps ca-certificates jq
  busybox-static libseccomp2 pigz)
# Bump to force a new debootstrap when the way the root file system is made changes.
ROOTFS_REVISION=1

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache_root=${RECONCILE_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reconcile-conformance}
# Not under $cache_root/kind: that directory is the product's (kubeconfigs, owner records).
kind_dir=$cache_root/tools/kind-$KIND_VERSION
work=$cache_root/kind-node/$KUBE_VERSION
bin=$work/bin
image_tar=$work/kindest-node-$KUBE_VERSION.tar

started=$SECONDS
step_started=$SECONDS
log() { echo "kind node: $*"; }
step() { log "$1 ($((SECONDS - step_started))s)"; step_started=$SECONDS; }
fail() { echo "kind node: $*" >&2; exit 1; }

if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then
  export PATH=/usr/local/go/bin:$PATH
fi
command -v go >/dev/null || fail "Go is needed to build kind and the node binaries, and is not on PATH"

sha256() { sha256sum | cut -d' ' -f1; }

# What built a thing: the named files (path and content), sorted, and Go.
stamp_of() {
  local f
  (
    cd "$repo"
    for f in $(printf '%s\n' "$@" | sort); do
      echo "== $f"
      cat "$f"
    done
    go version
  ) | sha256
}
kind_files() { (cd "$repo" && ls hack/kind/kind/go.mod hack/kind/kind/go.sum); }
node_bin_files() {
  (cd "$repo" && ls hack/kind/{kubernetes,crictl,coredns,pause}/go.mod hack/kind/{kubernetes,crictl,coredns}/go.sum hack/kind/pause/*.go)
}
image_files() {
  (
    cd "$repo"
    # not docker.sh or runc-wrapper.sh: they put nothing into the image
    ls hack/kind/node-image.sh hack/kube-binaries/build.sh hack/kube-binaries/*/go.mod hack/kube-binaries/*/go.sum
    find hack/kind/node -type f
  )
  node_bin_files
}

# Runs `go build` of the module's tools (or, for hack/kind/pause, its own
# package) in a module directory of hack/kind; logs to a file.
go_build_tools() { # dir, output dir, ldflags, [env...]
  local dir=$1 out=$2 ldflags=$3 log_file target=tool
  shift 3
  [[ $dir == pause ]] && target=.
  log_file=$(mktemp /tmp/kind-node-build.XXXXXX)
  if ! (cd "$here/$dir" && env "$@" go build -trimpath -ldflags "$ldflags" -o "$out/" "$target") >"$log_file" 2>&1; then
    tail -n 40 "$log_file" >&2
    rm -f "$log_file"
    fail "building hack/kind/$dir failed (above)"
  fi
  rm -f "$log_file"
}

# 1. kind ---------------------------------------------------------------------
ensure_kind() {
  local want
  local files
  mapfile -t files < <(kind_files)
  want=$(stamp_of "${files[@]}")
  if [[ -x $kind_dir/kind && -f $kind_dir/.build-stamp && $(cat "$kind_dir/.build-stamp") == "$want" ]]; then
    step "kind $KIND_VERSION up to date in $kind_dir"
    return
  fi
  log "building kind $KIND_VERSION into $kind_dir ..."
  mkdir -p "$kind_dir"
  rm -f "$kind_dir/.build-stamp"
  go_build_tools kind "$kind_dir" "-s -w"
  "$kind_dir/kind" version | grep -q "kind $KIND_VERSION " || fail "kind reports '$("$kind_dir/kind" version)'"
  echo "$want" >"$kind_dir/.build-stamp"
  step "built kind $KIND_VERSION"
}

ensure_docker() {
  bash "$here/docker.sh"
  step_started=$SECONDS
}

image_stamp_in_docker() {
  docker image inspect --format "{{ index .Config.Labels \"$STAMP_LABEL\" }}" "$IMAGE" 2>/dev/null || true
}

# 2. binaries -----------------------------------------------------------------
ensure_control_plane() {
  # Idempotent; the project's setup has normally built them already.
  bash "$repo/hack/kube-binaries/build.sh"
  control_plane_dir=$(bash "$repo/hack/kube-binaries/build.sh" --print-dir)
  step "control-plane binaries in $control_plane_dir"
}

ensure_node_binaries() {
  local want minor ldflags p
  local files
  mapfile -t files < <(node_bin_files)
  want=$(stamp_of "${files[@]}")
  local needed=(kubelet kubeadm kube-proxy crictl coredns pause) complete=true
  for p in "${needed[@]}"; do [[ -x $bin/$p ]] || complete=false; done
  if $complete && [[ -f $bin/.build-stamp && $(cat "$bin/.build-stamp") == "$want" ]]; then
    step "node binaries up to date in $bin"
    return
  fi
  mkdir -p "$bin"
  rm -f "$bin/.build-stamp"
  # The same version variables as hack/kube-binaries/build.sh sets.
  minor=${KUBE_VERSION#v1.}
  minor=${minor%%.*}
  ldflags="-s -w"
  for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  # One build at a time: each go build keeps both cores busy on its own.
  log "building kubelet, kubeadm, kube-proxy $KUBE_VERSION (several minutes; longer on a cold Go cache) ..."
  go_build_tools kubernetes "$bin" "$ldflags"
  step "built kubelet, kubeadm, kube-proxy"
  log "building CoreDNS ..."
  go_build_tools coredns "$bin" "-s -w" CGO_ENABLED=0
  step "built CoreDNS"
  log "building crictl $CRICTL_VERSION and pause ..."
  go_build_tools crictl "$bin" "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$CRICTL_VERSION" CGO_ENABLED=0
  go_build_tools pause "$bin" "-s -w" CGO_ENABLED=0
  for p in "${needed[@]}"; do [[ -x $bin/$p ]] || fail "no $bin/$p after the build"; done
  [[ $("$bin/kubelet" --version) == "Kubernetes $KUBE_VERSION" ]] || fail "kubelet reports '$("$bin/kubelet" --version)'"
  echo "$want" >"$bin/.build-stamp"
  step "node binaries ready in $bin"
}

# 3. root file system ---------------------------------------------------------
# The mirror apt uses for the suite, read from apt's sources at run time.
debian_mirror() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] || continue
    awk -v s="$DEBIAN_SUITE" '$1 == "deb" {
        i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
        if ($(i + 1) == s) { print $i; exit } }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    awk -v s="$DEBIAN_SUITE" '
      function flush() { if (deb && uri != "" && hit) print uri; deb = 0; uri = ""; hit = 0 }
      /^[ \t]*$/ { flush(); next }
      /^Types:/ { deb = ($0 ~ /[ \t]deb([ \t]|$)/) }
      /^URIs:/ { uri = $2 }
      /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == s) hit = 1 }
      END { flush() }' "$f"
  done
}

ensure_rootfs() {
  local want mirror dir packages
  packages=$(IFS=,; echo "${NODE_PACKAGES[*]}")
  want=$(echo "$DEBIAN_SUITE $packages $ROOTFS_REVISION" | sha256)
  if [[ -f $work/rootfs.tar && -f $work/rootfs.stamp && $(cat "$work/rootfs.stamp") == "$want" ]]; then
    step "Debian root file system up to date ($work/rootfs.tar)"
    return
  fi
  command -v debootstrap >/dev/null || fail "debootstrap is missing (hack/kind/docker.sh installs it)"
  mirror=$(debian_mirror | head -n 1)
  [[ -n $mirror ]] || fail "no apt source for $DEBIAN_SUITE in /etc/apt/sources.list*"
  dir=$work/rootfs.tmp
  rm -rf "$dir" "$work/rootfs.stamp"
  mkdir -p "$work"
  log "debootstrap $DEBIAN_SUITE (minbase + $packages), about 2-3 minutes ..."
  if ! debootstrap --variant=minbase --include="$packages" "$DEBIAN_SUITE" "$dir" "$mirror" >"$work/debootstrap.log" 2>&1; then
    tail -n 30 "$work/debootstrap.log" >&2
    fail "debootstrap failed (log: $work/debootstrap.log)"
  fi
  # What a node never needs: package caches and lists, docs, other shims.
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/* "$dir"/usr/share/{doc,man,info,locale}/* \
    "$dir"/usr/bin/containerd-shim "$dir"/usr/bin/containerd-shim-runc-v1
  tar -C "$dir" --numeric-owner -cf "$work/rootfs.tar.tmp" .
  mv -f "$work/rootfs.tar.tmp" "$work/rootfs.tar"
  rm -rf "$dir"
  echo "$want" >"$work/rootfs.stamp"
  step "Debian root file system made ($(du -h "$work/rootfs.tar" | cut -f1))"
}

# 4. the node image ----------------------------------------------------------
# Copies file $2 (absolute, in root $1) and the shared libraries it needs into $3.
copy_with_libs() {
  local root=$1 file=$2 dest=$3 lib
  mkdir -p "$dest$(dirname "$file")"
  cp -aL "$root$file" "$dest$file"
  # ldd runs in the node's root (the same Debian release), so paths are its own.
  for lib in $(chroot "$root" ldd "$file" 2>/dev/null | awk '/=>/ {print $3} /^\t\/[^ ]+ \(/ {print $1}'); do
    [[ -e $dest$lib ]] && continue
    mkdir -p "$dest$(dirname "$lib")"
    cp -aL "$root$lib" "$dest$lib"
  done
}

# The root of the component images: glibc and what the binaries link to,
# iptables for kube-proxy (both backends, picked at first use like upstream's
# iptables-wrapper) and nft (kube-proxy's nftables mode), CA certificates,
# users.
make_component_base() {
  local root=$1 dest=$2 f
  rm -rf "$dest"
  mkdir -p "$dest"/{etc/ssl/certs,tmp,var/run,usr/local/bin,usr/sbin,bin,root}
  chmod 1777 "$dest/tmp"
  for f in /usr/sbin/xtables-legacy-multi /usr/sbin/xtables-nft-multi /usr/sbin/nft /bin/busybox \
    $(cd "$root" && find usr/lib/x86_64-linux-gnu/xtables -name '*.so' | sed 's#^#/#') \
    /usr/lib/x86_64-linux-gnu/libnss_files.so.2 /usr/lib/x86_64-linux-gnu/libnss_dns.so.2; do
    [[ -e $root$f ]] && copy_with_libs "$root" "$f" "$dest"
  done
  for f in /usr/local/bin/kube-apiserver /usr/local/bin/kube-controller-manager \
    /usr/local/bin/kube-scheduler /usr/local/bin/etcd /usr/local/bin/kube-proxy; do
    copy_with_libs "$root" "$f" "$dest"
    rm -f "$dest$f" # only its libraries go into the base; the binary gets a layer of its own
  done
  cp -aL "$root/etc/ssl/certs/ca-certificates.crt" "$dest/etc/ssl/certs/"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/usr/sbin/nologin\n' >"$dest/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\nnonroot:x:65532:\n' >"$dest/etc/group"
  printf 'hosts: files dns\nnetworks: files\n' >"$dest/etc/nsswitch.conf"
  ln -s busybox "$dest/bin/sh"
  install -m 0755 "$here/node/iptables-wrapper" "$dest/usr/sbin/iptables-wrapper"
  for f in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
    ln -s iptables-wrapper "$dest/usr/sbin/$f"
  done
}

# Makes Docker image $1 from base image $2 plus files "src:dest"..., with the given entrypoint (JSON).
component_image() { # name, entrypoint-json, src:dest...
  local name=$1 entrypoint=$2 id pair
  shift 2
  id=$(docker create "$component_base" /bin/true)
  for pair in "$@"; do
    docker cp "${pair%%:*}" "$id:${pair#*:}"
  done
  docker commit --change "ENTRYPOINT $entrypoint" --change 'CMD []' "$id" "$name" >/dev/null
  docker rm "$id" >/dev/null
}

assemble_image() {
  local want=$1 root=$work/assemble/rootfs comp=$work/assemble/component-base p
  local component_base=reconcile-conformance/kind-component-base:$KUBE_VERSION
  local stage=reconcile-conformance/kind-node-stage:$KUBE_VERSION
  local preloaded=reconcile-conformance/kind-node-preloaded:$KUBE_VERSION
  # Intermediate images an interrupted run left behind.
  docker rmi "$component_base" "$stage" "$preloaded" >/dev/null 2>&1 || true
  rm -rf "$work/assemble"
  mkdir -p "$root"
  tar -C "$root" --numeric-owner -xf "$work/rootfs.tar"

  # Files of the node (entrypoint, units, containerd/CNI/crictl config, manifests).
  cp -a "$here/node/rootfs/." "$root/"
  chmod 0755 "$root/usr/local/bin/entrypoint"
  # Binaries where kind's image has them.
  for p in kubelet kubeadm; do install -m 0755 "$bin/$p" "$root/usr/bin/$p"; done
  install -m 0755 "$control_plane_dir/kubectl" "$root/usr/bin/kubectl"
  install -m 0755 "$bin/crictl" "$root/usr/local/bin/crictl"
  # Control-plane binaries only to find their libraries for the component base.
  for p in kube-apiserver kube-controller-manager kube-scheduler etcd; do
    install -m 0755 "$control_plane_dir/$p" "$root/usr/local/bin/$p"
  done
  install -m 0755 "$bin/kube-proxy" "$root/usr/local/bin/kube-proxy"
  # Debian keeps CNI plugins in /usr/lib/cni; kubelet and kind expect /opt/cni/bin.
  mkdir -p "$root/opt/cni"
  ln -sfn /usr/lib/cni "$root/opt/cni/bin"
  mkdir -p "$root/etc/kubernetes/manifests" "$root/kind"
  echo -n "$KUBE_VERSION" >"$root/kind/version"
  # systemd in a container: only what a node needs starts (as in kind's base image).
  rm -f "$root"/lib/systemd/system/multi-user.target.wants/* "$root"/etc/systemd/system/*.wants/* \
    "$root"/lib/systemd/system/local-fs.target.wants/* "$root"/lib/systemd/system/sockets.target.wants/*udev* \
    "$root"/lib/systemd/system/sockets.target.wants/*initctl* "$root"/lib/systemd/system/basic.target.wants/* \
    "$root"/lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service
  mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
  for p in containerd kubelet; do
    ln -sf "/etc/systemd/system/$p.service" "$root/etc/systemd/system/multi-user.target.wants/$p.service"
  done
  ln -sf /dev/null "$root/etc/systemd/system/systemd-binfmt.service"
  echo "ReadKMsg=no" >>"$root/etc/systemd/journald.conf"
  step "node root file system laid out"

  # The images kubeadm pulls, under the names it asks for.
  local images
  images=$(chroot "$root" kubeadm config images list --kubernetes-version "$KUBE_VERSION")
  make_component_base "$root" "$comp"
  rm -f "$root"/usr/local/bin/{kube-apiserver,kube-controller-manager,kube-scheduler,etcd,kube-proxy}
  tar -C "$comp" --numeric-owner -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$component_base" >/dev/null
  local image made=()
  for image in $images; do
    case $image in
      */kube-apiserver:* | */kube-controller-manager:* | */kube-scheduler:* | */kube-proxy:*)
        p=${image##*/}
        p=${p%%:*}
        local src=$control_plane_dir/$p
        [[ $p == kube-proxy ]] && src=$bin/kube-proxy
        component_image "$image" "[\"/usr/local/bin/$p\"]" "$src:/usr/local/bin/$p"
        ;;
      */etcd:*) component_image "$image" '["/usr/local/bin/etcd"]' "$control_plane_dir/etcd:/usr/local/bin/etcd" ;;
      */coredns:*) component_image "$image" '["/coredns"]' "$bin/coredns:/coredns" ;;
      */pause:*) component_image "$image" '["/pause"]' "$bin/pause:/pause" ;;
      *) fail "kubeadm asks for an image this script cannot make: $image" ;;
    esac
    made+=("$image")
  done
  # containerd's sandbox image (hack/kind/node/rootfs/etc/containerd/config.toml) must be among them.
  local sandbox
  sandbox=$(sed -n 's/^ *sandbox_image *= *"\(.*\)"/\1/p' "$root/etc/containerd/config.toml")
  printf '%s\n' "${made[@]}" | grep -qx "$sandbox" || fail "containerd's sandbox_image $sandbox is not among kubeadm's images"
  docker save "${made[@]}" >"$work/assemble/components.tar"
  docker rmi "${made[@]}" >/dev/null
  step "component images made: ${made[*]}"

  # The node image without the preloaded images, then containerd inside it imports them.
  tar -C "$root" --numeric-owner -c . | docker import - "$stage" >/dev/null
  rm -rf "$work/assemble/rootfs" "$comp"
  step "node root file system imported into Docker"
  local cid
  # --init: a PID 1 that reaps containerd once it is stopped.
  cid=$(docker run -d --init --privileged --cgroupns=private --tmpfs /run --tmpfs /tmp --entrypoint /bin/sleep "$stage" infinity)
  # shellcheck disable=SC2064 # expand now: the trap must remove this container
  trap "docker rm -f $cid >/dev/null 2>&1 || true" EXIT
  docker exec "$cid" bash -c 'containerd >/tmp/containerd.log 2>&1 &'
  docker exec "$cid" bash -c 'for i in $(seq 1 50); do ctr version >/dev/null 2>&1 && exit 0; sleep 0.2; done; cat /tmp/containerd.log; exit 1' \
    || fail "containerd did not start in the build container"
  # --no-unpack, as kind's builder: overlayfs cannot unpack onto the build
  # container's own overlay root; containerd unpacks each image at first use,
  # on the node's /var volume.
  docker exec -i "$cid" ctr --namespace=k8s.io images import --digests --no-unpack - <"$work/assemble/components.tar" >/dev/null
  local listed
  listed=$(docker exec "$cid" ctr --namespace=k8s.io images list -q)
  for image in "${made[@]}"; do
    grep -qx "$image" <<<"$listed" || fail "$image is missing from the node's containerd after the import"
  done
  # Stopped before the commit, so its metadata database is complete on disk.
  docker exec "$cid" bash -c 'pkill -x containerd; for i in $(seq 1 100); do pgrep -x containerd >/dev/null || exit 0; sleep 0.2; done; exit 1' \
    || fail "containerd did not stop in the build container"
  docker commit "$cid" "$preloaded" >/dev/null
  docker rm -f "$cid" >/dev/null
  trap - EXIT
  # The image's metadata, as kind's base image sets it: systemd must know it
  # runs in a container, and stops on SIGRTMIN+3. `docker commit --change`
  # cannot set STOPSIGNAL, so a Dockerfile does (the legacy builder: its FROM
  # is local, nothing is pulled).
  if ! DOCKER_BUILDKIT=0 docker build -q -t "$IMAGE" - >/dev/null 2>"$work/docker-build.log" <<EOF; then
FROM $preloaded
ENV container=docker
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
CMD []
STOPSIGNAL SIGRTMIN+3
LABEL $STAMP_LABEL=$want
EOF
    cat "$work/docker-build.log" >&2
    fail "docker build of the image's metadata failed"
  fi
  docker rmi "$preloaded" "$stage" "$component_base" >/dev/null
  rm -rf "$work/assemble"
  step "images preloaded into the node's containerd; committed $IMAGE"
}

ensure_image() {
  local want have
  local files
  mapfile -t files < <(image_files)
  want=$(stamp_of "${files[@]}")
  have=$(image_stamp_in_docker)
  if [[ $have == "$want" ]]; then
    step "$IMAGE present in Docker and up to date"
    return
  fi
  if [[ -n $have ]]; then
    log "$IMAGE in Docker was built from other sources; replacing it"
    docker rmi "$IMAGE" >/dev/null 2>&1 || log "could not remove the old $IMAGE (a container uses it?); it stays, untagged"
  fi
  if [[ -f $image_tar && -f $image_tar.stamp && $(cat "$image_tar.stamp") == "$want" ]]; then
    docker load -i "$image_tar" >/dev/null
    [[ $(image_stamp_in_docker) == "$want" ]] || fail "$image_tar did not load as a current $IMAGE"
    step "$IMAGE loaded from $image_tar"
    return
  fi
  ensure_control_plane
  ensure_node_binaries
  ensure_rootfs
  assemble_image "$want"
  rm -f "$image_tar.stamp"
  docker save "$IMAGE" >"$image_tar.tmp"
  mv -f "$image_tar.tmp" "$image_tar"
  echo "$want" >"$image_tar.stamp"
  step "$IMAGE saved to $image_tar ($(du -h "$image_tar" | cut -f1))"
}

main() {
  local print_env=false
  case ${1:-} in
    --print-env) print_env=true ;;
    "") ;;
    *) echo "usage: $0 [--print-env]" >&2; exit 2 ;;
  esac
  exec 3>&1 1>&2 # progress to stderr; the result goes to fd 3 (stdout)
  ensure_docker
  ensure_kind
  ensure_image
  log "ready in $((SECONDS - started))s: image $IMAGE, kind at $kind_dir/kind"
  if $print_env; then
    # shellcheck disable=SC2016 # $PATH is for the eval, not for here
    printf 'export PATH=%q:"$PATH"\n' "$kind_dir" >&3
    printf 'export RECONCILE_CONFORMANCE_KIND_NODE_IMAGE=%q\n' "$IMAGE" >&3
  else
    echo "$IMAGE $kind_dir/kind" >&3
  fi
}

# Sourcing the script (for debugging one step) defines the functions only.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  main "$@"
fi
