#!/usr/bin/env bash
# phases-table.sh FILE [TOTAL SECONDS]: prints the phases hack/phase.sh
# recorded in FILE as a table, in the order they ran, with the run's total.
set -euo pipefail
file=$1
total=${2:-}
echo
echo "| phase | seconds | exit |"
echo "| --- | ---: | ---: |"
awk -F'\t' '{printf "| %s | %s | %s |\n", $1, $2, $3}' "$file"
if [[ -n $total ]]; then
	printf '| **the whole run** | %d (%d min %d s) | |\n' "$total" $((total / 60)) $((total % 60))
fi
