#!/usr/bin/env bash
# The upload-artifact stand-in's step (see action.yml): copy SOURCE into
# $ACT_STAND_IN_ARTIFACTS/NAME.
set -euo pipefail
store=${ACT_STAND_IN_ARTIFACTS:-}
if [[ -z $store || ! -d $store ]]; then
  echo "::error title=upload-artifact stand-in::ACT_STAND_IN_ARTIFACTS is not a directory ('$store'): run the workflow with hack/act/run-workflow.sh"
  exit 1
fi
if [[ -z $NAME || $NAME == *[/\\:\<\>\|\*\?\"]* ]]; then
  echo "::error title=upload-artifact stand-in::invalid artifact name '$NAME'"
  exit 1
fi
source_path=$SOURCE
[[ $source_path == "~"* ]] && source_path=$HOME${source_path#\~}
if [[ $source_path == *$'\n'* || $source_path == *[\*\?\[]* || $source_path == '!'* ]]; then
  echo "::error title=upload-artifact stand-in::path '$SOURCE': the stand-in takes one file or directory, no globs, exclusions or several lines"
  exit 1
fi
files=0
[[ -f $source_path ]] && files=1
[[ -d $source_path ]] && files=$(find "$source_path" -type f | wc -l)
if [[ $files == 0 ]]; then
  message="No files were found with the provided path: $SOURCE. No artifacts will be uploaded."
  case $IF_NO_FILES_FOUND in
    error) echo "::error::$message"; exit 1 ;;
    ignore) echo "$message"; exit 0 ;;
    *) echo "::warning::$message"; exit 0 ;;
  esac
fi
dest=$store/$NAME
if [[ -e $dest ]]; then
  if [[ $OVERWRITE != true ]]; then
    echo "::error title=upload-artifact stand-in::an artifact named '$NAME' was already uploaded in this run (upload-artifact@v4 fails the same way: names are unique per run unless overwrite: true)"
    exit 1
  fi
  rm -rf "$dest"
fi
mkdir -p "$dest"
if [[ -d $source_path ]]; then
  cp -a "$source_path/." "$dest/"
else
  cp -a "$source_path" "$dest/"
fi
echo "upload-artifact stand-in: artifact '$NAME' ($files files) stored in $dest"
