#!/usr/bin/env bash
# build-tools.sh SET...: builds the tools of each SET, commands of the tools
# module hack/tools, into .cache/bin:
#
#   test     what make test runs: kustomize, Helm 3 and 4, kubeconform and
#            actionlint
#   cluster  the control plane the end-to-end suite runs (etcd,
#            kube-apiserver, kube-controller-manager, kube-scheduler,
#            kubectl, kwok) and what the node runs beside it (kubelet,
#            kube-proxy, CoreDNS)
#
# Every Go tool that builds on Kubernetes' libraries is a command of that
# one module: in one module graph a library compiles once for all of them,
# and at the versions the main module requires, whose tests compile it too,
# once for the tests as well. So no -trimpath here: it would make every
# package's compilation a different one from the tests'. And the tools the
# sets name build in one go build, whatever sets name them: two go builds at
# once would each compile the libraries they share, neither finding them in
# the build cache yet. Only a command whose base name another already has
# (Helm 3 and 4 are both "helm") builds after.
#
# A stamp of each tool (.cache/bin/.NAME.version: the module's pins, this
# script, Go's version and the package) skips it until one of them changes.
# There is no download of prebuilt binaries here, only the Go module proxy.
set -euo pipefail
cd "$(dirname "$0")/.."

bin="$PWD/.cache/bin"
dir=hack/tools
mkdir -p "$bin"

k8s=k8s.io/kubernetes/cmd
declare -A sets=(
	[test]="kustomize=sigs.k8s.io/kustomize/kustomize/v5 helm=helm.sh/helm/v3/cmd/helm
		helm4=helm.sh/helm/v4/cmd/helm kubeconform=github.com/yannh/kubeconform/cmd/kubeconform
		actionlint=github.com/rhysd/actionlint/cmd/actionlint"
	[cluster]="kube-apiserver=$k8s/kube-apiserver kube-controller-manager=$k8s/kube-controller-manager
		kube-scheduler=$k8s/kube-scheduler kubectl=$k8s/kubectl kubelet=$k8s/kubelet
		kube-proxy=$k8s/kube-proxy etcd=go.etcd.io/etcd/server/v3 kwok=sigs.k8s.io/kwok/cmd/kwok
		coredns=github.com/trainfn/trainfn/hack/tools/coredns"
)

tools=()
for set; do
	[[ -v sets[$set] ]] || { echo "build-tools: no set $set (test, cluster)" >&2; exit 2; }
	# read stops at the end of the input, which is not NUL: its status is 1.
	read -r -d '' -a named <<<"${sets[$set]}" || true
	tools+=("${named[@]}")
done

# The binaries report a real version: kubectl and the components compare
# it, and the default v0.0.0-master reads as no version at all. One set of
# flags for every tool, so that a tool's stamp does not hang on which others
# it was built with.
kubernetes=$(cd "$dir" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=${kubernetes#v1.}
minor=${minor%%.*}
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$kubernetes -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
pins=$( (cat "$dir/go.mod" "$dir/go.sum" "$0"; go env GOVERSION) | sha256sum | cut -d' ' -f1)

# stamp TOOL: what the stamp of NAME=PACKAGE says when it is up to date.
stamp() { echo "$pins ${1#*=}"; }

stale=()
for tool in "${tools[@]}"; do
	name=${tool%%=*}
	if [[ ! -x "$bin/$name" || "$(cat "$bin/.$name.version" 2>/dev/null)" != "$(stamp "$tool")" ]]; then
		stale+=("$tool")
	fi
done
((${#stale[@]} > 0)) || exit 0

echo "build-tools: building ${stale[*]%%=*} from $dir (minutes, once)" >&2
out=$(mktemp -d "$bin/.build.XXXXXX")
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

declare -A first
together=() later=()
for tool in "${stale[@]}"; do
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
for tool in "${stale[@]}"; do
	name=${tool%%=*}
	mv "$out/$name.new" "$bin/$name"
	stamp "$tool" >"$bin/.$name.version"
done
