#!/usr/bin/env bash
# Runs every fuzz target (func FuzzXxx in a fuzz_test.go) one after the
# other, FUZZTIME each (1m by default), with FUZZPARALLEL workers (the
# number of cores by default); FUZZ, a regular expression, picks the
# targets by name (all by default). Go writes an input that fails to
# testdata/fuzz/FuzzXxx/ in the target's package; commit it, and plain
# go test runs it from then on. Exits 1 when any target failed, after
# running them all, so one run collects every crasher.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-1m}
parallel=${FUZZPARALLEL:-$(getconf _NPROCESSORS_ONLN)}
only=${FUZZ:-.}

# Every target, as "file:func FuzzXxx".
targets=$(git ls-files --cached --others --exclude-standard -z -- '*fuzz_test.go' |
	xargs -0 grep -Ho '^func Fuzz[A-Za-z0-9_]*')

failed=()
while IFS=: read -r file decl; do
	[[ -n $file ]] || continue
	pkg=./$(dirname "$file") target=${decl#func }
	[[ $target =~ $only ]] || continue
	echo "fuzz: $pkg $target for $fuzztime" >&2
	# -fuzztime bounds the run, and Go fails any input that keeps a worker
	# over 10 s; the default -timeout of 10m would cut a longer FUZZTIME short.
	# Validating with CUE takes milliseconds, so the default minute spent
	# shrinking each new input would leave a short run no time to fuzz.
	if ! "${GO:-go}" test -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" -fuzzminimizetime 10s \
		-parallel "$parallel" -timeout 0 "$pkg" </dev/null; then
		failed+=("$pkg $target")
	fi
done <<<"$targets"

if ((${#failed[@]} > 0)); then
	printf 'fuzz: failed: %s\n' "${failed[@]}" >&2
	exit 1
fi
