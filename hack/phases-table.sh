#!/usr/bin/env bash
# phases-table.sh FILE [TOTAL SECONDS]: prints the phases hack/phase.sh
# recorded in FILE as a table, in the order they ran, with the run's total
# (and how busy the cores were through each, which hack/phase.sh explains).
set -euo pipefail
file=$1
total=${2:-}
echo
echo "| phase | seconds | exit | cores busy |"
echo "| --- | ---: | ---: | ---: |"
awk -F'\t' '{printf "| %s | %s | %s | %s |\n", $1, $2, $3, ($4 == "" ? "" : $4 "%")}' "$file"
if [[ -n $total ]]; then
	printf '| **the whole run** | %d (%d min %d s) | | |\n' "$total" $((total / 60)) $((total % 60))
fi
