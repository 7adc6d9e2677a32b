#!/usr/bin/env bash
# Runs a workflow of this repository under act (nektos/act) on this machine: a real runner for the
# Action (act reads action.yml, runs runs.main and runs.post with the node on PATH, and writes
# outputs, state, the step summary and annotations as a runner does), in act's container-free
# mode (-P <label>=-self-hosted: the steps run as processes here, no Docker).
#
#   hack/act/run-workflow.sh WORKFLOW [ACT-ARGS...]
#   hack/act/run-workflow.sh .github/workflows/self-test.yml --matrix cluster:kwok
#   hack/act/run-workflow.sh .github/workflows/self-test.yml --matrix cluster:kwok -j merge
#
# ACT-ARGS go to act as they are (act takes one -j; -j runs that job and the jobs it needs).
# actions/checkout of this repository is act's copy of the working tree (files .gitignore leaves
# out, such as node_modules, are not copied); actions/setup-go@v6, setup-node@v5,
# upload-artifact@v4 and download-artifact@v5 are mapped to the stand-ins in test/act/stand-ins
# (see test/act/README.md); any other action would have to be fetched, and fails offline.
#
# Environment:
#   ACT_EVENT            push (default) or pull_request: the event act simulates (no token, no network)
#   ACT_RUN_DIR          where the run keeps its files (default a new directory under ${TMPDIR:-/tmp}):
#                        act.log (act's whole output, a time on each line), artifacts/ (the run's
#                        artifact store), actions/ (act's action cache and the jobs' workspaces,
#                        which act removes when each job ends), event.json
#   ACT_CONCURRENT_JOBS  jobs act runs at once (default 1: kind or kwok clusters are heavy; the
#                        entries of one matrix job still run side by side, up to max-parallel)
#   ACT_REPOSITORY       github.repository of the run (default reconcile-conformance/reconcile-conformance)
# Exit status: act's.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"

if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
  exit 2
fi
workflow=$1
shift
if [[ ! -f $workflow ]]; then
  echo "run-workflow: no workflow file $workflow" >&2
  exit 2
fi
event=${ACT_EVENT:-push}
case $event in push | pull_request) ;; *)
  echo "run-workflow: ACT_EVENT must be push or pull_request, not $event" >&2
  exit 2
  ;;
esac

# Node 24 first on PATH (the Action is node24; the jobs inherit this PATH), and Go for act's build.
# shellcheck source=scripts/lib/node24.sh
source scripts/lib/node24.sh
rc_ensure_node
if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then export PATH="/usr/local/go/bin:$PATH"; fi
act=$(bash hack/act/build.sh)

run_dir=${ACT_RUN_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/act-run.XXXXXX")}
mkdir -p "$run_dir/artifacts" "$run_dir/actions"
run_dir=$(cd "$run_dir" && pwd)
log=$run_dir/act.log

repository=${ACT_REPOSITORY:-reconcile-conformance/reconcile-conformance}
branch=$(git symbolic-ref --quiet --short HEAD 2>/dev/null || echo main)
sha=$(git rev-parse HEAD 2>/dev/null || echo 0000000000000000000000000000000000000000)
repo_json="{\"full_name\":\"$repository\",\"name\":\"${repository#*/}\",\"owner\":{\"login\":\"${repository%%/*}\"},\"default_branch\":\"main\"}"
if [[ $event == push ]]; then
  echo "{\"ref\":\"refs/heads/$branch\",\"after\":\"$sha\",\"repository\":$repo_json}" >"$run_dir/event.json"
else
  echo "{\"number\":1,\"pull_request\":{\"number\":1,\"head\":{\"ref\":\"$branch\",\"sha\":\"$sha\"},\"base\":{\"ref\":\"main\"}},\"repository\":$repo_json}" >"$run_dir/event.json"
fi

stand_ins=$repo/test/act/stand-ins
args=(
  "$event"
  --workflows "$workflow"
  --eventpath "$run_dir/event.json"
  # act's container-free mode: every job of these labels runs as processes on this machine.
  -P ubuntu-latest=-self-hosted -P ubuntu-24.04=-self-hosted -P self-hosted=-self-hosted
  --action-cache-path "$run_dir/actions"
  --action-offline-mode
  --no-cache-server
  --concurrent-jobs "${ACT_CONCURRENT_JOBS:-1}"
  --local-repository "actions/setup-go@v6=$stand_ins/setup-go"
  --local-repository "actions/setup-node@v5=$stand_ins/setup-node"
  --local-repository "actions/upload-artifact@v4=$stand_ins/upload-artifact"
  --local-repository "actions/download-artifact@v5=$stand_ins/download-artifact"
  --env "ACT_STAND_IN_ARTIFACTS=$run_dir/artifacts"
  --env "GITHUB_REPOSITORY=$repository"
  # Files act would read from the current directory when present: none of this run's.
  --env-file "$run_dir/none.env" --secret-file "$run_dir/none.secrets"
  --var-file "$run_dir/none.vars" --input-file "$run_dir/none.input"
)

# In self-hosted mode act hands its own environment to every step: leave out what an outer runner
# (this script run inside a GitHub Actions job) set for its own steps, so the run is the same there
# as on a workstation. act sets the GITHUB_* and RUNNER_* of its jobs itself.
outer=()
for name in $(compgen -e); do
  case $name in GITHUB_* | ACTIONS_* | RUNNER_* | INPUT_* | STATE_*) outer+=(-u "$name") ;; esac
done

echo "run-workflow: act $("$act" --version | sed 's/^act version //'), $workflow on $event, node $(node --version); log $log"
started=$SECONDS
set +e
env "${outer[@]}" ACT_DISABLE_VERSION_CHECK=1 "$act" "${args[@]}" "$@" 2>&1 | while IFS= read -r line; do
  printf '%(%s)T %s\n' -1 "$line" >>"$log"
  # Progress on the terminal: each job's start, its steps' outcomes, its end.
  case $line in
    *"✅  Success - "* | *"❌  Failure - "* | *"🏁  Job "* | "Error: "*) printf '%(%H:%M:%S)T %s\n' -1 "$line" ;;
  esac
done
status=${PIPESTATUS[0]}
set -e
elapsed=$((SECONDS - started))

# Per job: its name, matrix, result and time (first to last line of its log).
echo "run-workflow: jobs (from $log)"
awk '
  match($0, /^[0-9]+ \[[^]]+\] /) {
    t = $1; job = substr($0, length(t) + 3, RLENGTH - length(t) - 4); sub(/ +$/, "", job)
    if (!(job in first)) { first[job] = t; order[++n] = job }
    last[job] = t
    if (index($0, "🧪  Matrix: ")) { m = $0; sub(/.*Matrix: /, "", m); matrix[job] = m }
    if (index($0, "🏁  Job succeeded")) result[job] = "success"
    if (index($0, "🏁  Job failed")) result[job] = "failure"
  }
  END {
    for (i = 1; i <= n; i++) {
      job = order[i]
      printf "  %-28s %-8s %5ds  %s\n", job, (job in result ? result[job] : "unfinished"), last[job] - first[job], matrix[job]
    }
  }
' "$log"
echo "run-workflow: act exited $status after ${elapsed}s; artifacts in $run_dir/artifacts"
exit "$status"
