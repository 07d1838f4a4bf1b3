#!/usr/bin/env bash
# Installs what the tests need beside Go, idempotently: tools built from
# their Go modules into .cache/bin (pinned; rebuilt only when the pin
# changes), and Debian packages when a command is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

bin="$PWD/.cache/bin"
mkdir -p "$bin"

# go_tool NAME MODULE@VERSION: build a pinned tool once.
go_tool() {
	local name=$1 module=$2 stamp="$bin/.$1.version"
	if [[ -x "$bin/$name" && "$(cat "$stamp" 2>/dev/null)" == "$module" ]]; then
		return
	fi
	echo "tools: building $module" >&2
	GOBIN="$bin" GOFLAGS=-mod=mod go install "$module"
	echo "$module" >"$stamp"
}

# debian_command COMMAND PACKAGE: install a Debian package for a command.
# Daemons live in /usr/sbin, which is not on every user's PATH.
debian_command() {
	local cmd=$1 pkg=$2
	command -v "$cmd" >/dev/null || [[ -x /usr/sbin/$cmd ]] && return
	debian_package "$pkg" "$cmd"
}

# debian_package PACKAGE [COMMAND]: install a Debian package.
debian_package() {
	local pkg=$1 cmd=${2:-$1}
	if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
		echo "tools: $cmd is missing; install the Debian package $pkg" >&2
		exit 1
	fi
	echo "tools: installing $pkg" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >/dev/null; }
}

# go_tool_as NAME MODULE@VERSION: go_tool, for a command whose own name
# another tool already has (helm 3 and helm 4 are both "helm").
go_tool_as() {
	local name=$1 module=$2 stamp="$bin/.$1.version" tmp
	if [[ -x "$bin/$name" && "$(cat "$stamp" 2>/dev/null)" == "$module" ]]; then
		return
	fi
	echo "tools: building $module as $name" >&2
	tmp=$(mktemp -d)
	GOBIN="$tmp" GOFLAGS=-mod=mod go install "$module"
	mv "$tmp"/* "$bin/$name"
	rmdir "$tmp"
	echo "$module" >"$stamp"
}

# module_tool NAME DIR [LDFLAGS]: build the tool DIR's go.mod names, once per
# go.mod, go.sum and flags. kpt is built this way: its versions are on the
# module proxy but not in the checksum database, so its go.sum, committed, is
# what pins it.
module_tool() {
	local name=$1 dir=$2 ldflags=${3:-} stamp="$bin/.$1.version" want
	want=$( (cat "$dir/go.mod" "$dir/go.sum"; echo "$ldflags") | sha256sum | cut -d' ' -f1)
	if [[ -x "$bin/$name" && "$(cat "$stamp" 2>/dev/null)" == "$want" ]]; then
		return
	fi
	echo "tools: building $name from $dir" >&2
	(cd "$dir" && go build -trimpath -ldflags "$ldflags" -o "$bin/$name" "$(sed -n 's/^tool //p' go.mod)")
	echo "$want" >"$stamp"
}

go_tool kustomize sigs.k8s.io/kustomize/kustomize/v5@v5.8.2
go_tool helm helm.sh/helm/v3/cmd/helm@v3.22.0
go_tool_as helm4 helm.sh/helm/v4/cmd/helm@v4.3.1
go_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0
# actionlint checks the GitHub Actions workflows the Flux example shows,
# their run: scripts with shellcheck.
go_tool actionlint github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
debian_command shellcheck shellcheck
# benchstat compares make bench's Go benchmarks with the previous run's.
if [[ ${1:-} == bench ]]; then
	go_tool benchstat golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
fi
kpt=github.com/GoogleContainerTools/kpt
module_tool kpt hack/tools/kpt "-X $kpt/run.version=$(cd hack/tools/kpt && go list -m -f '{{.Version}}' "$kpt")"
# yaml-language-server, which the editor example is tested with, from npm,
# with every dependency pinned by hack/tools/yaml-language-server's lock.
debian_command node nodejs
debian_command npm npm
yls=.cache/npm/yaml-language-server@1.25.0
want=$(cat hack/tools/yaml-language-server/package*.json | sha256sum | cut -d' ' -f1)
if [[ ! -x $yls/node_modules/yaml-language-server/bin/yaml-language-server || "$(cat "$yls/.version" 2>/dev/null)" != "$want" ]]; then
	echo "tools: installing yaml-language-server from npm" >&2
	rm -rf "$yls" && mkdir -p "$yls"
	cp hack/tools/yaml-language-server/package.json hack/tools/yaml-language-server/package-lock.json "$yls/"
	npm ci --prefix "$yls" --no-audit --no-fund >/dev/null
	echo "$want" >"$yls/.version"
fi
debian_command ssh-keygen openssh-client
debian_command sshd openssh-server
# The end-to-end suite stands a pod in for its own namespaces.
debian_command ip iproute2
debian_command unshare util-linux

# The end-to-end suite also runs real torchrun: Debian's PyTorch, whose
# torchrun runs on the system Python, whatever python3 PATH finds first.
if [[ ${1:-} == e2e && ! -x /usr/bin/torchrun ]]; then
	debian_package python3-torch
fi

# And real mpirun (test/mpirun): Open MPI and MPICH with their compilers.
# The test finds them by the names Debian gives each (mpirun.openmpi,
# mpicc.mpich, ...), whatever the alternatives point at. A command would
# not tell whether its -dev package is there (mpicc.openmpi comes without
# mpi.h), so ask dpkg.
if [[ ${1:-} == e2e ]]; then
	for pkg in openmpi-bin libopenmpi-dev mpich libmpich-dev; do
		dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null | grep -qx 'install ok installed' ||
			debian_package "$pkg"
	done
fi

# And an rsh server and client (test/mpirun's Rsh launch mode): Debian's
# netkit rsh-server and rsh-client and openbsd-inetd, unpacked into
# .cache/rsh for the test's stand-in image, not installed: installing them
# would start an rsh server on this machine. Their libraries are.
if [[ ${1:-} == e2e ]]; then
	rsh_packages="rsh-server rsh-client openbsd-inetd"
	rsh=.cache/rsh
	if [[ ! -x $rsh/usr/sbin/in.rshd || "$(cat "$rsh/.version" 2>/dev/null)" != "$rsh_packages" ]]; then
		echo "tools: unpacking $rsh_packages into $rsh" >&2
		debs=$(mktemp -d)
		# apt-get download writes into the working directory.
		(cd "$debs" && { apt-get download -q $rsh_packages >/dev/null 2>&1 ||
			{ apt-get update -q >/dev/null && apt-get download -q $rsh_packages >/dev/null; }; })
		rm -rf "$rsh" && mkdir -p "$rsh"
		for deb in "$debs"/*.deb; do
			dpkg-deb -x "$deb" "$rsh"
		done
		rm -rf "$debs"
		echo "$rsh_packages" >"$rsh/.version"
	fi
	for pkg in libwrap0 libevent-2.1-7 libpam-modules; do
		dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null | grep -qx 'install ok installed' ||
			debian_package "$pkg"
	done
fi

# PyYAML, a YAML 1.1 reader, which reads every golden output in the tests:
# on PATH's python3 or Debian's.
if ! python3 -c 'import yaml' 2>/dev/null && ! /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
	debian_package python3-yaml
fi

# The node (make node, the node suite): containerd and runc to run
# containers, the CNI plugins for their network, iptables for kube-proxy,
# debootstrap for the images' file system.
if [[ ${1:-} == node ]]; then
	debian_command containerd containerd
	debian_command runc runc
	debian_command iptables iptables
	debian_command debootstrap debootstrap
	[[ -x /usr/lib/cni/bridge ]] || debian_package containernetworking-plugins
fi
