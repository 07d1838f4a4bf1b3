#!/usr/bin/env bash
# make lint: gofmt over every Go file, then golangci-lint with .golangci.yml
# over the module, the end-to-end suites (build tag e2e) included. Arguments
# go to golangci-lint run (hack/lint.sh --fix, or a package pattern);
# hack/lint.sh --build only builds golangci-lint, as hack/tools.sh does.
#
# golangci-lint is built from its Go module into .cache/bin, pinned by
# hack/tools/golangci-lint's go.mod and go.sum, and rebuilt only when they or
# the Go toolchain change: it type-checks with the Go it was built with. Its
# analysis cache is .cache/golangci-lint, which CI keeps with the rest of
# .cache, unless GOLANGCI_LINT_CACHE says otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

go=${GO:-go}
bin="$PWD/.cache/bin"
dir=hack/tools/golangci-lint
stamp="$bin/.golangci-lint.version"

want=$( (cat "$dir/go.mod" "$dir/go.sum"; "$go" env GOVERSION) | sha256sum | cut -d' ' -f1)
if [[ ! -x "$bin/golangci-lint" || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
	echo "lint: building golangci-lint from $dir (a minute or two, once)" >&2
	mkdir -p "$bin"
	# Built beside and renamed into place, so that a lint running at the
	# same time from another checkout never runs half a binary.
	tmp=$(mktemp "$bin/.golangci-lint.XXXXXX")
	(cd "$dir" && "$go" build -trimpath -o "$tmp" "$(sed -n 's/^tool //p' go.mod)")
	mv "$tmp" "$bin/golangci-lint"
	echo "$want" >"$stamp"
fi

if [[ ${1:-} == --build ]]; then
	exit 0
fi

# gofmt reads every tracked Go file, whatever its build tags and module
# (hack/tools has modules of its own that golangci-lint does not load).
unformatted=$( (git ls-files -z '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*' -print0) | xargs -0 gofmt -l)
if [[ -n $unformatted ]]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi

export GOLANGCI_LINT_CACHE=${GOLANGCI_LINT_CACHE:-$PWD/.cache/golangci-lint}
"$bin/golangci-lint" run "$@"
