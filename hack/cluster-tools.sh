#!/usr/bin/env bash
# Builds the control plane the end-to-end suite runs (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl and kwok) and what the
# node runs beside it (kubelet, kube-proxy, CoreDNS) from their Go modules
# into .cache/bin, once: a stamp of the pins skips the build until
# hack/tools/go.mod, go.sum or this script change. There is no download of
# prebuilt binaries here, only the Go module proxy.
set -euo pipefail
cd "$(dirname "$0")/.."

bin="$PWD/.cache/bin"
mkdir -p "$bin"

kubernetes=$(cd hack/tools && go list -m -f '{{.Version}}' k8s.io/kubernetes)
# The suite takes kwok's stages from the kwok module go.mod requires, so the
# binary is built from the same version.
kwok=sigs.k8s.io/kwok/cmd/kwok@$(go list -m -f '{{.Version}}' sigs.k8s.io/kwok)
# CoreDNS, the cluster DNS of the node, from its own go.mod too.
coredns=github.com/coredns/coredns@v1.15.0
components=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy etcd kwok coredns)

stamp="$bin/.cluster.version"
want=$( (cat hack/tools/go.mod hack/tools/go.sum "$0"; echo "$kwok $coredns") | sha256sum | cut -d' ' -f1)
built=true
for c in "${components[@]}"; do [[ -x "$bin/$c" ]] || built=false; done
if $built && [[ "$(cat "$stamp" 2>/dev/null)" == "$want" ]]; then
	exit 0
fi

echo "cluster-tools: building Kubernetes $kubernetes, etcd and kwok (minutes, once)" >&2
# The binaries report a real version: kubectl and the components compare it,
# and the default v0.0.0-master reads as no version at all.
minor=${kubernetes#v1.}
minor=${minor%%.*}
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$kubernetes -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"

(
	cd hack/tools
	for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
		go build -trimpath -ldflags "$ldflags" -o "$bin/$c" "k8s.io/kubernetes/cmd/$c"
	done
	# The kubelet and kube-proxy need a few go.sum lines the tools'
	# go.mod does not: the module proxy has them.
	for c in kubelet kube-proxy; do
		GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$bin/$c" "k8s.io/kubernetes/cmd/$c"
	done
	go build -trimpath -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3
)
# kwok pins its own Kubernetes libraries, so it builds from its own go.mod.
GOBIN="$bin" GOFLAGS=-mod=mod go install -trimpath -ldflags "-s -w" "$kwok"
GOBIN="$bin" GOFLAGS=-mod=mod go install -trimpath -ldflags "-s -w" "$coredns"

echo "$want" >"$stamp"
