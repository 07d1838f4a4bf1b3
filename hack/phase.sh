#!/usr/bin/env bash
# phase.sh NAME COMMAND [ARG...]: runs COMMAND as one phase of a make target
# and says how long it took, and how busy the machine's cores were
# meanwhile, on standard error; when TRAINFN_PHASES names a file, as a line
# "NAME<TAB>SECONDS<TAB>EXIT STATUS<TAB>BUSY %" of it too, which .ci/run
# prints as its table of phases. Exits with COMMAND's status.
#
# Busy is the whole machine's, not the command's (phases overlap): a phase
# that took long on an idle machine waited; one on a busy machine was
# short of cores, and only less work, not more overlap, makes it shorter.
set -uo pipefail

# cpu_jiffies: the machine's busy and total CPU time so far, from
# /proc/stat's cpu line (idle and iowait are not busy).
cpu_jiffies() {
	local _ user nice system idle iowait rest n
	read -r _ user nice system idle iowait rest </proc/stat
	local total=$((user + nice + system + idle + iowait))
	for n in $rest; do
		total=$((total + n))
	done
	echo "$((total - idle - iowait)) $total"
}

name=$1
shift
start=$(date +%s%N)
read -r busy0 total0 < <(cpu_jiffies)
"$@"
status=$?
read -r busy1 total1 < <(cpu_jiffies)
ms=$((($(date +%s%N) - start) / 1000000))
seconds=$(printf '%d.%01d' $((ms / 1000)) $((ms % 1000 / 100)))
busy=$(((busy1 - busy0) * 100 / (total1 - total0 > 0 ? total1 - total0 : 1)))
echo "phase: $name took ${seconds}s (exit $status, cores ${busy}% busy)" >&2
if [[ -n ${TRAINFN_PHASES:-} ]]; then
	printf '%s\t%s\t%d\t%d\n' "$name" "$seconds" "$status" "$busy" >>"$TRAINFN_PHASES"
fi
exit "$status"
