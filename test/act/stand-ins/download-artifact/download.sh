#!/usr/bin/env bash
# The download-artifact stand-in's step (see action.yml): copy artifacts out of
# $ACT_STAND_IN_ARTIFACTS.
set -euo pipefail
store=${ACT_STAND_IN_ARTIFACTS:-}
if [[ -z $store || ! -d $store ]]; then
  echo "::error title=download-artifact stand-in::ACT_STAND_IN_ARTIFACTS is not a directory ('$store'): run the workflow with hack/act/run-workflow.sh"
  exit 1
fi
dest=${DEST:-${GITHUB_WORKSPACE:-$PWD}}
[[ $dest == "~"* ]] && dest=$HOME${dest#\~}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
names=()
if [[ -n $NAME ]]; then
  if [[ ! -d $store/$NAME ]]; then
    echo "::error::Unable to download artifact(s): Artifact '$NAME' not found"
    exit 1
  fi
  names=("$NAME")
else
  for dir in "$store"/*/; do
    [[ -d $dir ]] || continue
    artifact=$(basename "$dir")
    # shellcheck disable=SC2053 # PATTERN is a glob on purpose
    [[ -z $PATTERN || $artifact == $PATTERN ]] && names+=("$artifact")
  done
fi
for artifact in "${names[@]}"; do
  target=$dest
  [[ -z $NAME && $MERGE_MULTIPLE != true ]] && target=$dest/$artifact
  mkdir -p "$target"
  cp -a "$store/$artifact/." "$target/"
  echo "download-artifact stand-in: artifact '$artifact' copied into $target"
done
echo "Total of ${#names[@]} artifact(s) downloaded"
echo "download-path=$dest" >>"$GITHUB_OUTPUT"
