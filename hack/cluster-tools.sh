#!/usr/bin/env bash
# Builds the control plane the end-to-end suite runs (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl and kwok) and what the
# node runs beside it (kubelet, kube-proxy, CoreDNS) into .cache/bin, once,
# from the tools module (hack/build-tools.sh says why one module): the
# build is skipped until hack/tools/go.mod, go.sum or the flags change.
# There is no download of prebuilt binaries here, only the Go module proxy.
# The suite takes kwok's stages from the kwok module the main go.mod
# requires, the version the tools module builds.
set -euo pipefail
cd "$(dirname "$0")/.."

kubernetes=$(cd hack/tools && go list -m -f '{{.Version}}' k8s.io/kubernetes)
# The binaries report a real version: kubectl and the components compare it,
# and the default v0.0.0-master reads as no version at all.
minor=${kubernetes#v1.}
minor=${minor%%.*}
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$kubernetes -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"

k8s=k8s.io/kubernetes/cmd
hack/build-tools.sh cluster "$ldflags" \
	kube-apiserver=$k8s/kube-apiserver kube-controller-manager=$k8s/kube-controller-manager \
	kube-scheduler=$k8s/kube-scheduler kubectl=$k8s/kubectl kubelet=$k8s/kubelet kube-proxy=$k8s/kube-proxy \
	etcd=go.etcd.io/etcd/server/v3 kwok=sigs.k8s.io/kwok/cmd/kwok coredns=github.com/coredns/coredns
