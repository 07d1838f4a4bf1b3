#!/usr/bin/env bash
# phase.sh NAME COMMAND [ARG...]: runs COMMAND as one phase of a make target
# and says how long it took, on standard error; when TRAINFN_PHASES names a
# file, as a line "NAME<TAB>SECONDS<TAB>EXIT STATUS" of it too, which
# .ci/run prints as its table of phases. Exits with COMMAND's status.
set -uo pipefail

name=$1
shift
start=$(date +%s%N)
"$@"
status=$?
ms=$((($(date +%s%N) - start) / 1000000))
seconds=$(printf '%d.%01d' $((ms / 1000)) $((ms % 1000 / 100)))
echo "phase: $name took ${seconds}s (exit $status)" >&2
if [[ -n ${TRAINFN_PHASES:-} ]]; then
	printf '%s\t%s\t%d\n' "$name" "$seconds" "$status" >>"$TRAINFN_PHASES"
fi
exit "$status"
