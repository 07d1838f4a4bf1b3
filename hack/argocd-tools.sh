#!/usr/bin/env bash
# Builds argocd-harness into .cache/bin, once: Argo CD's argocd-cmp-server,
# the repo-server's manifest generation and gitops-engine's sync, from Argo
# CD's own packages, which the Argo CD tests run (hack/tools/argocd/main.go
# says how). A stamp of the module's pins and sources skips the build until
# they or this script change. Argo CD pins older Kubernetes libraries than this
# repository does, so it builds in a module of its own; only the Go module
# proxy is used.
set -euo pipefail
cd "$(dirname "$0")/.."

bin="$PWD/.cache/bin"
mkdir -p "$bin"
dir=hack/tools/argocd

stamp="$bin/.argocd-harness.version"
want=$(cat "$dir/go.mod" "$dir/go.sum" "$dir"/*.go hack/argocd-tools.sh | sha256sum | cut -d' ' -f1)
if [[ -x "$bin/argocd-harness" && "$(cat "$stamp" 2>/dev/null)" == "$want" ]]; then
	exit 0
fi

version=$(cd "$dir" && go list -m -f '{{.Version}}' github.com/argoproj/argo-cd/v3)
echo "argocd-tools: building argocd-harness from Argo CD $version (minutes, once)" >&2
# The CMP server logs the version it reports, as a released build does.
ldflags="-s -w -X github.com/argoproj/argo-cd/v3/common.version=${version#v}"
(cd "$dir" && go build -trimpath -ldflags "$ldflags" -o "$bin/argocd-harness" .)
echo "$want" >"$stamp"
