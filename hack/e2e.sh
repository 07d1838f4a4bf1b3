#!/usr/bin/env bash
# e2e.sh: runs the end-to-end suite: the packages of test/ and examples/
# with tests under the build tag e2e, and test/trainer-oracle,
# hack/tools/argocd and test/jobhealth, modules of their own. Each package
# is a phase (hack/phase.sh); every package runs, and the script fails if
# any failed.
#
# The packages but the node's run two at a time (E2E_LANES): each starts
# its own control plane on ports of its own and its own bridges
# (test/netns), and most of them wait on their servers, their cores half
# idle or more. The longest start first, so that the lanes end together.
# The real node's package (test/onnode) runs after them, alone, once its
# images are packed: it starts the one node this machine has room for,
# whose pods must not wait on a busy machine past the suite's timeouts.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

go=${GO:-go}
lanes=${E2E_LANES:-2}
module=$($go list -m)
packages=$($go list -tags e2e -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./test/... ./examples/...) || exit 1

# The oracle: Kubeflow Trainer's runtime framework, against the TrainJob
# render, and Trainer's webhooks, behind a kube-apiserver of its own, against
# its refusals; in a module of its own so that nothing of Trainer is linked
# into trainfn. Its first run compiles Trainer's graph.
oracle=test/trainer-oracle
# The health checks, with Argo CD's own code (the harness's module) and
# with Flux's status readers: modules of their own too. They build with
# -trimpath, as hack/argocd-tools.sh builds the harness, so that Argo CD's
# graph, compiled for it, is not compiled again.
health="hack/tools/argocd test/jobhealth"
alone=test/onnode
# test/onnode's tests that need two nodes (needNodes).
two_nodes='^(TestJobsSpanNodes|TestNodeLostUnderAWorker|TestNodeLostUnderTheLauncher|TestElasticJobAcrossNodeLoss|TestRshPolicyIsEnforced)$'
longest=(test/e2e "$oracle")

# shellcheck disable=SC2206 # the two folders, split
queue=("${longest[@]}" $health)
for p in $packages; do
	p=${p#"$module"/}
	[[ $p == "$alone" || " ${longest[*]} " == *" $p "* ]] || queue+=("$p")
done

failed=$(mktemp)
trap 'rm -f "$failed"' EXIT

# run_package PACKAGE: runs one package's tests as a phase, and records it
# in $failed if they fail.
run_package() {
	local p=$1
	if [[ $p == "$oracle" ]]; then
		hack/phase.sh "e2e $p" env -C "$p" TRAINFN_REQUIRE_TOOLS=1 "$go" test -count=1 -timeout 30m . || echo "$p" >>"$failed"
		return
	fi
	if [[ " $health " == *" $p "* ]]; then
		hack/phase.sh "e2e $p" env -C "$p" "$go" test -trimpath -count=1 -timeout 30m . || echo "$p" >>"$failed"
		return
	fi
	hack/phase.sh "e2e $p" env TRAINFN_REQUIRE_TOOLS=1 \
		"$go" test -tags e2e -count=1 -parallel 8 -timeout 30m "./$p" || echo "$p" >>"$failed"
}
export go oracle health failed
export -f run_package

# The package is the inner bash's $1, not this one's.
# shellcheck disable=SC2016
printf '%s\n' "${queue[@]}" | xargs -P "$lanes" -I{} bash -c 'run_package "$1"' _ {}
# The node's images after the lanes: they take trainfn's from the release,
# which .ci/run makes meanwhile, in the background.
if [[ $packages == *"$module/$alone"* ]]; then
	if hack/phase.sh images hack/node-images.sh; then
		run_package "$alone"
		# The tests that need two nodes skip on one; they run again, alone,
		# on a cluster of two, whose second node costs memory and CPU the
		# others need not pay for.
		hack/phase.sh "e2e $alone on 2 nodes" env TRAINFN_REQUIRE_TOOLS=1 TRAINFN_NODES=2 \
			"$go" test -tags e2e -count=1 -parallel 8 -timeout 30m -run "$two_nodes" "./$alone" ||
			echo "$alone (2 nodes)" >>"$failed"
	else
		echo "$alone (its images)" >>"$failed"
	fi
fi
if [[ -s $failed ]]; then
	echo "e2e: failed: $(tr '\n' ' ' <"$failed")" >&2
	exit 1
fi
