#!/usr/bin/env bash
# e2e.sh: runs the end-to-end suite (the packages of test/ and examples/
# with tests under the build tag e2e, then test/trainer-oracle, a module of
# its own) one package at a time, each one a
# phase (hack/phase.sh), as `go test -p 1` would; every package runs, and
# the script fails if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

go=${GO:-go}
module=$($go list -m)
packages=$($go list -tags e2e -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./test/... ./examples/...) || exit 1
failed=()
for p in $packages; do
	hack/phase.sh "e2e ${p#"$module"/}" env TRAINFN_REQUIRE_TOOLS=1 \
		"$go" test -tags e2e -count=1 -parallel 8 -timeout 30m "$p" || failed+=("${p#"$module"/}")
done
# Kubeflow Trainer's runtime framework as the oracle of the TrainJob
# render: a module of its own, so that nothing of Trainer is linked into
# trainfn.
hack/phase.sh "e2e test/trainer-oracle" env -C test/trainer-oracle \
	"$go" test -count=1 -timeout 30m . || failed+=(test/trainer-oracle)
if ((${#failed[@]} > 0)); then
	echo "e2e: failed: ${failed[*]}" >&2
	exit 1
fi
