#!/bin/bash
# A runc wrapper for machines whose capability bounding set is smaller than
# the full set (here: CAP_SYS_RESOURCE is missing). runc refuses to start a
# container whose OCI config asks for a capability it cannot have ("unable to
# apply caps: operation not permitted"), and privileged containers (kind's
# nodes, `docker exec --privileged`, kube-proxy) ask for all of them.
#
# On `create`/`run` (the bundle's config.json) and `exec --process FILE` this
# wrapper rewrites the spec before runc sees it:
#   - drops from every capability list each capability that is not in this
#     process's bounding set (they could not be granted anyway);
#   - raises process.oomScoreAdj to this process's own oom_score_adj when it
#     asks for less: lowering it needs CAP_SYS_RESOURCE.
# Every other invocation is passed through unchanged. Needs bash and jq.
#
# hack/kind/docker.sh installs it as dockerd's default runtime: Docker 20.10
# gives privileged containers its fixed list of all capabilities. It also
# works nested (the node inherits the reduced bounding set), but kind's node
# does not need it: its containerd (1.6) gives privileged containers the
# capabilities of its own bounding set, and restrict_oom_score_adj (in the
# node's containerd config) clamps the OOM scores the kubelet asks for.
set -euo pipefail

self=$(readlink -f "${BASH_SOURCE[0]}")
real=${RECONCILE_CONFORMANCE_REAL_RUNC:-}
if [[ -z $real ]]; then
  for candidate in /usr/sbin/runc /usr/bin/runc /usr/local/sbin/runc.real /usr/local/bin/runc.real; do
    if [[ -x $candidate && $(readlink -f "$candidate") != "$self" ]]; then
      real=$candidate
      break
    fi
  done
fi
[[ -n $real ]] || { echo "runc wrapper: no real runc found" >&2; exit 127; }

# Capability names by number (linux/capability.h), as the OCI spec spells them.
cap_names=(CAP_CHOWN CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH CAP_FOWNER CAP_FSETID
  CAP_KILL CAP_SETGID CAP_SETUID CAP_SETPCAP CAP_LINUX_IMMUTABLE
  CAP_NET_BIND_SERVICE CAP_NET_BROADCAST CAP_NET_ADMIN CAP_NET_RAW CAP_IPC_LOCK
  CAP_IPC_OWNER CAP_SYS_MODULE CAP_SYS_RAWIO CAP_SYS_CHROOT CAP_SYS_PTRACE
  CAP_SYS_PACCT CAP_SYS_ADMIN CAP_SYS_BOOT CAP_SYS_NICE CAP_SYS_RESOURCE
  CAP_SYS_TIME CAP_SYS_TTY_CONFIG CAP_MKNOD CAP_LEASE CAP_AUDIT_WRITE
  CAP_AUDIT_CONTROL CAP_SETFCAP CAP_MAC_OVERRIDE CAP_MAC_ADMIN CAP_SYSLOG
  CAP_WAKE_ALARM CAP_BLOCK_SUSPEND CAP_AUDIT_READ CAP_PERFMON CAP_BPF
  CAP_CHECKPOINT_RESTORE)

# The names of the capabilities this process's bounding set holds, as a JSON array.
allowed_caps_json() {
  local hex bits i names=()
  hex=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
  bits=$((16#$hex))
  for i in "${!cap_names[@]}"; do
    if (((bits >> i) & 1)); then names+=("\"${cap_names[$i]}\""); fi
  done
  local IFS=,
  echo "[${names[*]}]"
}

# Rewrites the OCI process object in file $1: the whole file for
# `exec --process`, its .process member for a bundle's config.json.
fix_spec() {
  local file=$1 where=$2 own tmp
  [[ -f $file ]] || return 0
  own=$(cat /proc/self/oom_score_adj 2>/dev/null || echo 0)
  tmp=$(mktemp "$file.XXXXXX")
  jq --argjson allowed "$(allowed_caps_json)" --argjson own "$own" --arg where "$where" '
    def fix:
      if type != "object" then . else
        (if .capabilities then
           .capabilities |= with_entries(
             if (.value | type) == "array"
             then .value |= map(select(. as $c | $allowed | index($c)))
             else . end)
         else . end)
        | (if (.oomScoreAdj != null) and (.oomScoreAdj < $own) then .oomScoreAdj = $own else . end)
      end;
    if $where == "process" then .process |= fix else fix end' "$file" >"$tmp"
  chmod --reference="$file" "$tmp" 2>/dev/null || true
  mv -f "$tmp" "$file"
}

# Find the subcommand (skipping runc's global flags, some of which take a value).
args=("$@")
sub="" sub_at=-1
i=0
while ((i < ${#args[@]})); do
  a=${args[$i]}
  case $a in
    --root | --log | --log-format | --criu | --rootless) i=$((i + 2)); continue ;;
    -*) i=$((i + 1)); continue ;;
    *) sub=$a; sub_at=$i; break ;;
  esac
done

if [[ $sub == create || $sub == run || $sub == exec ]]; then
  bundle=$PWD process=""
  for ((j = sub_at + 1; j < ${#args[@]}; j++)); do
    a=${args[$j]}
    case $a in
      --bundle | -b) bundle=${args[$((j + 1))]}; j=$((j + 1)) ;;
      --bundle=* | -b=*) bundle=${a#*=} ;;
      --process | -p) process=${args[$((j + 1))]}; j=$((j + 1)) ;;
      --process=* | -p=*) process=${a#*=} ;;
    esac
  done
  if [[ $sub == exec ]]; then
    [[ -n $process ]] && fix_spec "$process" whole
  else
    fix_spec "$bundle/config.json" process
  fi
fi

exec "$real" "$@"
