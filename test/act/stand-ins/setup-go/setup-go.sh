#!/usr/bin/env bash
# The setup-go stand-in's step (see action.yml): find the machine's Go, check it against WANTED_GO_VERSION,
# put its bin directories on GITHUB_PATH, write the go-version output.
set -euo pipefail
echo "setup-go stand-in: using the Go on this machine (nothing is downloaded; cache inputs ignored)"
go=$(command -v go || true)
[[ -z $go && -x /usr/local/go/bin/go ]] && go=/usr/local/go/bin/go
if [[ -z $go ]]; then
  echo "::error title=setup-go stand-in::no Go on this machine (not on PATH, not /usr/local/go/bin/go); the stand-in does not download Go"
  exit 1
fi
have=$("$go" env GOVERSION)
have=${have#go}
have=${have%%[-+ ]*}
want=${WANTED_GO_VERSION#v}
want=${want#go}
if [[ -n $want ]]; then
  if ! [[ $want =~ ^[0-9]+(\.([0-9]+|x))*$ ]]; then
    echo "::error title=setup-go stand-in::go-version '$WANTED_GO_VERSION' is not a version the stand-in understands (major.minor[.patch], .x allowed); ranges and aliases are not supported"
    exit 1
  fi
  IFS=. read -ra w <<<"$want"
  IFS=. read -ra h <<<"$have"
  for i in "${!w[@]}"; do
    if [[ ${w[i]} != x && ${w[i]} != "${h[i]:-}" ]]; then
      echo "::error title=setup-go stand-in::go-version '$WANTED_GO_VERSION' wanted, but the Go on this machine ($go) is $have; the stand-in does not download Go"
      exit 1
    fi
  done
fi
goroot=$("$go" env GOROOT)
gopath=$("$go" env GOPATH)
echo "$goroot/bin" >>"$GITHUB_PATH"
echo "${gopath%%:*}/bin" >>"$GITHUB_PATH"
echo "go-version=$have" >>"$GITHUB_OUTPUT"
echo "setup-go stand-in: Go $have from $goroot/bin on PATH"
