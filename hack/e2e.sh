#!/usr/bin/env bash
# e2e.sh: runs the end-to-end suite, the packages of test/ and examples/
# with tests under the build tag e2e, each one a phase (hack/phase.sh), in
# two lanes side by side: test/onnode, whose jobs run on the real node, and
# every other package one at a time, on control planes of their own with
# kwok's nodes or on local processes. Both lanes spend most of their time
# waiting on pods and processes, and share nothing: the node's containers
# have a network of their own. Every package runs; the script fails if any
# failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

go=${GO:-go}
module=$($go list -m)
packages=$($go list -tags e2e -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./test/... ./examples/...) || exit 1
node=$module/test/onnode

# run LANE PACKAGE...: runs each package's tests as a phase, one at a time,
# and lists those that failed in the lane's file of failures.
failures=$(mktemp -d)
trap 'rm -rf "$failures"' EXIT
run() {
	local lane=$1 p
	shift
	for p; do
		hack/phase.sh "e2e ${p#"$module"/}" env TRAINFN_REQUIRE_TOOLS=1 \
			"$go" test -tags e2e -count=1 -parallel 8 -timeout 30m "$p" ||
			echo "${p#"$module"/}" >>"$failures/$lane"
	done
}

onnode=() others=()
for p in $packages; do
	if [[ $p == "$node" ]]; then
		onnode+=("$p")
	else
		others+=("$p")
	fi
done
run node "${onnode[@]}" &
run others "${others[@]}"
wait
if compgen -G "$failures/*" >/dev/null; then
	echo "e2e: failed: $(cat "$failures"/* | tr '\n' ' ')" >&2
	exit 1
fi
