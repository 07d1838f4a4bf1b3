#!/usr/bin/env bash
# build-tools.sh SET LDFLAGS NAME=PACKAGE...: builds commands of the tools
# module, hack/tools, into .cache/bin, each under its NAME.
#
# Every Go tool that builds on Kubernetes' libraries (the control plane, the
# node's kubelet and CoreDNS, kwok, Helm 3 and 4, kustomize) is a command of
# that one module: in one module graph a library compiles once for all of
# them, and at the versions the main module requires, whose tests compile it
# first, it compiles once for the tests too. So no -trimpath here: it would
# make every package's compilation a different one from the tests'.
#
# The commands of a SET build in one go build, but for any whose base name
# another already has (helm 3 and helm 4 are both "helm"), which builds
# after. A stamp of the module's pins, the flags and the names
# (.cache/bin/.SET.version) skips the build until one of them changes.
set -euo pipefail
cd "$(dirname "$0")/.."

set=$1 ldflags=$2
shift 2
bin="$PWD/.cache/bin"
dir=hack/tools
stamp="$bin/.$set.version"
mkdir -p "$bin"

want=$( (cat "$dir/go.mod" "$dir/go.sum" "$0"; go env GOVERSION; echo "$ldflags $*") | sha256sum | cut -d' ' -f1)
built=true
for tool in "$@"; do [[ -x "$bin/${tool%%=*}" ]] || built=false; done
if $built && [[ "$(cat "$stamp" 2>/dev/null)" == "$want" ]]; then
	exit 0
fi

echo "build-tools: building ${*%%=*} from $dir" >&2
out=$(mktemp -d "$bin/.$set.XXXXXX")
trap 'rm -rf "$out"' EXIT
# binary_name PACKAGE: the file go build -o DIR/ writes a command to: its
# last path element, or the one before a major version suffix (etcd's
# go.etcd.io/etcd/server/v3 is "server").
binary_name() {
	local base=${1##*/} rest=${1%/*}
	if [[ $base =~ ^v[0-9]+$ && $rest != "$1" ]]; then
		base=${rest##*/}
	fi
	echo "$base"
}

# One go build for the commands of distinct base names, into a folder of
# its own; the rest one at a time.
declare -A first
together=() later=()
for tool in "$@"; do
	pkg=${tool#*=}
	base=$(binary_name "$pkg")
	if [[ -v first[$base] ]]; then
		later+=("$tool")
	else
		first[$base]=$tool
		together+=("$pkg")
	fi
done
(cd "$dir" && go build -ldflags "$ldflags" -o "$out/" "${together[@]}")
for base in "${!first[@]}"; do
	mv "$out/$base" "$out/${first[$base]%%=*}.new"
done
for tool in "${later[@]}"; do
	(cd "$dir" && go build -ldflags "$ldflags" -o "$out/${tool%%=*}.new" "${tool#*=}")
done
# Renamed into place, so that a run of the tests from another checkout
# never starts half a binary.
for tool in "$@"; do
	mv "$out/${tool%%=*}.new" "$bin/${tool%%=*}"
done
echo "$want" >"$stamp"
