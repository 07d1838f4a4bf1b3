#!/usr/bin/env bash
# make bench-node: the pi example on real nodes through trainfn and
# through mpi-operator, interleaved in one run (hack/bench/node; its flags
# follow, -nodes 2 -loss-runs 3 on two nodes). Builds
# mpi-operator's controller from its Go module into .cache/bin, once, and
# reads its CRD from the same module; nothing of it is committed.
set -euo pipefail
cd "$(dirname "$0")/.."
operator=github.com/kubeflow/mpi-operator@v0.8.0
bin=$PWD/.cache/bin
mkdir -p "$bin" .cache/bench
if [[ ! -x $bin/mpi-operator || "$(cat "$bin/.mpi-operator.version" 2>/dev/null)" != "$operator" ]]; then
	echo "bench-node: building $operator" >&2
	# Its go.mod, as a requirement of a module of our own: go install
	# asks the proxy for the module's version list, which it refuses.
	tmp=$(mktemp -d)
	printf 'module bench\n\ngo 1.25.0\n\nrequire %s %s\n' "${operator%@*}" "${operator#*@}" >"$tmp/go.mod"
	(cd "$tmp" && GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$bin/mpi-operator" "${operator%@*}/cmd/mpi-operator")
	rm -rf "$tmp"
	echo "$operator" >"$bin/.mpi-operator.version"
fi
dir=$(go mod download -json "$operator" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
go run ./hack/bench/node -operator "$bin/mpi-operator" -crd "$dir/manifests/base/kubeflow.org_mpijobs.yaml" -trainfn bin/trainfn "$@"
