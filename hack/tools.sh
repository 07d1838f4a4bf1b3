#!/usr/bin/env bash
# Installs what the tests need beside Go, idempotently: tools built from
# their Go modules into .cache/bin (pinned; rebuilt only when a pin
# changes), Debian packages when a command or package is missing, and
# yaml-language-server from npm.
#
#   hack/tools.sh           what make test needs
#   hack/tools.sh e2e       that, and what the end-to-end suite runs besides:
#                           torchrun, Open MPI, MPICH, rsh, the control plane,
#                           Kueue, kube-network-policies and Argo CD's harness
#   hack/tools.sh node      make test's, the control plane and what a real
#                           node needs
#   hack/tools.sh all       every mode's but bench's: what .ci/run runs
#   hack/tools.sh bench     make test's, and benchstat
#   hack/tools.sh packages  the Debian packages of every mode, nothing built:
#                           .ci/run installs them while Go compiles
#
# The Go builds of a mode run side by side, each module's its own go build:
# one build leaves a core idle through much of its linking and of the
# packages every other one waits on. The tools module's commands are one
# build, whatever the mode (hack/build-tools.sh says why).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
bin="$PWD/.cache/bin"
mkdir -p "$bin"

# debian_command COMMAND PACKAGE: install a Debian package for a command.
# Daemons live in /usr/sbin, which is not on every user's PATH.
debian_command() {
	local cmd=$1 pkg=$2
	command -v "$cmd" >/dev/null || [[ -x /usr/sbin/$cmd ]] && return
	debian_package "$pkg" "$cmd"
}

# debian_packages PACKAGE...: install the Debian packages dpkg does not
# list as installed. A command would not tell whether a -dev package is
# there (mpicc.openmpi comes without mpi.h), so ask dpkg.
debian_packages() {
	local pkg
	for pkg; do
		dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null | grep -qx 'install ok installed' ||
			debian_package "$pkg"
	done
}

# debian_package PACKAGE [COMMAND]: install a Debian package. apt is run
# under a lock of this repository's: .ci/run installs packages in the
# background while make test installs its own, and apt refuses a second
# apt at once.
debian_package() {
	local pkg=$1 cmd=${2:-$1}
	if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
		echo "tools: $cmd is missing; install the Debian package $pkg" >&2
		exit 1
	fi
	echo "tools: installing $pkg" >&2
	(
		flock 9
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >/dev/null 2>&1 ||
			{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >/dev/null; }
	) 9>"$PWD/.cache/apt.lock"
}

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

# module_tool NAME DIR [LDFLAGS]: build the tool DIR's go.mod names, or
# DIR's own main where it names none, once per go.mod, go.sum, main and
# flags. kpt is built this way: its versions are on the module proxy but not
# in the checksum database, so its go.sum, committed, is what pins it.
module_tool() {
	local name=$1 dir=$2 ldflags=${3:-} stamp="$bin/.$1.version" want pkg
	want=$( (cat "$dir/go.mod" "$dir/go.sum"; find "$dir" -maxdepth 1 -name '*.go' | sort | xargs -r cat; echo "$ldflags") | sha256sum | cut -d' ' -f1)
	if [[ -x "$bin/$name" && "$(cat "$stamp" 2>/dev/null)" == "$want" ]]; then
		return
	fi
	echo "tools: building $name from $dir" >&2
	pkg=$(sed -n 's/^tool //p' "$dir/go.mod")
	(cd "$dir" && go build -trimpath -ldflags "$ldflags" -o "$bin/$name" "${pkg:-.}")
	echo "$want" >"$stamp"
}

# The builds run as phase.sh's commands, in a bash of their own.
export bin
export -f go_tool module_tool

# in_background NAME COMMAND...: run a build beside the others, as a phase
# of its own (hack/phase.sh); built waits for every one and fails if any
# did.
builds=()
trap 'kill "${builds[@]}" 2>/dev/null || true' EXIT
in_background() {
	hack/phase.sh "$@" &
	builds+=($!)
}
built() {
	local pid failed=0
	for pid in "${builds[@]}"; do
		wait "$pid" || failed=1
	done
	builds=()
	return "$failed"
}

# The Debian packages of each mode.
test_packages() {
	debian_command shellcheck shellcheck
	debian_command node nodejs
	debian_command npm npm
	debian_command ssh-keygen openssh-client
	debian_command sshd openssh-server
	# The end-to-end suite stands a pod in for its own namespaces.
	debian_command ip iproute2
	debian_command unshare util-linux
	# PyYAML, a YAML 1.1 reader, which reads every golden output in the
	# tests: on PATH's python3 or Debian's.
	if ! python3 -c 'import yaml' 2>/dev/null && ! /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
		debian_package python3-yaml
	fi
}
e2e_packages() {
	# Real torchrun: Debian's PyTorch, whose torchrun runs on the system
	# Python, whatever python3 PATH finds first.
	[[ -x /usr/bin/torchrun ]] || debian_package python3-torch
	# Real mpirun (test/mpirun): Open MPI and MPICH with their compilers.
	# The test finds them by the names Debian gives each (mpirun.openmpi,
	# mpicc.mpich, ...), whatever the alternatives point at.
	debian_packages openmpi-bin libopenmpi-dev mpich libmpich-dev
	# The libraries of the rsh server and client (rsh_unpacked).
	debian_packages libwrap0 libevent-2.1-7 libpam-modules
}
node_packages() {
	# containerd and runc to run containers, the CNI plugins for their
	# network, iptables for kube-proxy, debootstrap for the images' file
	# system.
	debian_command containerd containerd
	debian_command runc runc
	debian_command iptables iptables
	debian_command debootstrap debootstrap
	[[ -x /usr/lib/cni/bridge ]] || debian_package containernetworking-plugins
}

# rsh_unpacked: an rsh server and client (test/mpirun's Rsh launch mode),
# Debian's netkit rsh-server and rsh-client and openbsd-inetd, unpacked
# into .cache/rsh for the test's stand-in image, not installed: installing
# them would start an rsh server on this machine.
rsh_unpacked() {
	local packages="rsh-server rsh-client openbsd-inetd" rsh=.cache/rsh debs deb
	if [[ -x $rsh/usr/sbin/in.rshd && "$(cat "$rsh/.version" 2>/dev/null)" == "$packages" ]]; then
		return
	fi
	echo "tools: unpacking $packages into $rsh" >&2
	debs=$(mktemp -d)
	# apt-get download writes into the working directory.
	(cd "$debs" && { apt-get download -q $packages >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null && apt-get download -q $packages >/dev/null; }; })
	rm -rf "$rsh" && mkdir -p "$rsh"
	for deb in "$debs"/*.deb; do
		dpkg-deb -x "$deb" "$rsh"
	done
	rm -rf "$debs"
	echo "$packages" >"$rsh/.version"
}

# yaml_language_server: which the editor example is tested with, from npm,
# with every dependency pinned by hack/tools/yaml-language-server's lock.
yaml_language_server() {
	local yls=.cache/npm/yaml-language-server@1.25.0 want
	want=$(cat hack/tools/yaml-language-server/package*.json | sha256sum | cut -d' ' -f1)
	if [[ -x $yls/node_modules/yaml-language-server/bin/yaml-language-server && "$(cat "$yls/.version" 2>/dev/null)" == "$want" ]]; then
		return
	fi
	echo "tools: installing yaml-language-server from npm" >&2
	rm -rf "$yls" && mkdir -p "$yls"
	cp hack/tools/yaml-language-server/package.json hack/tools/yaml-language-server/package-lock.json "$yls/"
	npm ci --prefix "$yls" --no-audit --no-fund >/dev/null
	echo "$want" >"$yls/.version"
}

if [[ $mode == packages ]]; then
	test_packages
	e2e_packages
	node_packages
	exit 0
fi

case $mode in
'' | bench) sets=(test) ;;
e2e | node | all) sets=(test cluster) ;;
*)
	echo "tools: no mode $mode (e2e, node, all, bench, packages)" >&2
	exit 2
	;;
esac

# kustomize, Helm 3 and 4 and kubeconform are make test's; actionlint checks
# the GitHub Actions workflows the Flux example shows, their run: scripts
# with shellcheck. The cluster set is the end-to-end suite's and the
# node's: the control plane, the kubelet, kube-proxy and CoreDNS.
in_background "tools module: ${sets[*]}" hack/build-tools.sh "${sets[@]}"
kpt=github.com/GoogleContainerTools/kpt
in_background kpt module_tool kpt hack/tools/kpt "-X $kpt/run.version=$(cd hack/tools/kpt && go list -m -f '{{.Version}}' "$kpt")"
# golangci-lint is make lint's.
in_background golangci-lint hack/lint.sh --build
# Argo CD's harness, the suite's alone, pins older libraries of its own.
if [[ $mode == e2e || $mode == all ]]; then
	in_background "Argo CD harness" hack/argocd-tools.sh
fi
# Kueue's controller, which the suites and the node run for the jobs that
# queue: a module of its own, since it builds only on the Kubernetes
# libraries of its release (1.36's), not on the tools module's.
if [[ $mode == e2e || $mode == node || $mode == all ]]; then
	in_background kueue module_tool kueue hack/tools/kueue
	# kube-network-policies, the node's NetworkPolicy agent: its own module
	# too, on the Kubernetes libraries its release pins (1.32's).
	in_background kube-network-policies module_tool kube-network-policies hack/tools/kube-network-policies
fi
# benchstat compares make bench's Go benchmarks with the previous run's.
if [[ $mode == bench ]]; then
	in_background benchstat go_tool benchstat golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
fi
test_packages
yaml_language_server
if [[ $mode != "" && $mode != bench ]]; then
	e2e_packages
	rsh_unpacked
fi
if [[ $mode == node || $mode == all ]]; then
	node_packages
fi
built
