package mpi

import (
	"strconv"
	"strings"

	"github.com/trainfn/trainfn/render/handoff"
)

// WriteHostsKey is the script that writes the hostfile and the discovery
// script when the pod starts, for a job with too many hosts to list them in
// its ConfigMap: the API server takes at most 1 MiB of values in a
// ConfigMap's data (corev1.MaxSecretSize), the lines of about 20,000 hosts.
const WriteHostsKey = "write_hosts.sh"

// NumberedHosts are hosts named Prefix + i + Suffix for i from 0 to
// Count-1, each with Slots slots: the workers of a job.
type NumberedHosts struct {
	Prefix, Suffix string
	Count          int
	Slots          int32
}

// Hosts are every host, in order.
func (n NumberedHosts) Hosts() []handoff.Host {
	hosts := make([]handoff.Host, n.Count)
	for i := range hosts {
		hosts[i] = n.Host(i)
	}
	return hosts
}

// Host is host i.
func (n NumberedHosts) Host(i int) handoff.Host {
	return handoff.Host{Name: n.Prefix + strconv.Itoa(i) + n.Suffix, Slots: n.Slots}
}

// WriteHosts is a script, run as `sh write_hosts.sh FROM TO`, that copies
// the files of directory FROM into TO and writes beside them the hostfile
// and the discovery script that Hostfile and handoff.DiscoverHosts (in
// format) would write for first followed by numbered, byte for byte. Its
// size does not grow with the number of hosts.
func WriteHosts(impl Implementation, format handoff.DiscoverFormat, first []handoff.Host, numbered NumberedHosts) string {
	var listed, discovered strings.Builder
	for _, h := range first {
		listed.WriteString("  printf '%s\\n' " + shellQuote(hostLine(impl, h.Name, h.Slots)) + "\n")
		discovered.WriteString("  printf '%s\\n' " + shellQuote(handoff.DiscoverLine(h.Name, h.Slots, format)) + "\n")
	}
	// The numbered hosts' lines as printf formats, with %d for the number.
	name := printfLiteral(numbered.Prefix) + "%d" + printfLiteral(numbered.Suffix)
	return strings.NewReplacer(
		"{{hostfile}}", HostfileKey,
		"{{discover}}", handoff.DiscoverHostsKey,
		"{{count}}", strconv.Itoa(numbered.Count),
		"{{listed}}", listed.String(),
		"{{discovered}}", discovered.String(),
		"{{hostLine}}", "printf "+shellQuote(hostLine(impl, name, numbered.Slots)+`\n`)+` "$i"`,
		"{{discoverLine}}", "printf "+shellQuote(handoff.DiscoverLine(name, numbered.Slots, format)+`\n`)+` "$i"`,
	).Replace(writeHostsTemplate)
}

// The files are written under temporary names and renamed when complete:
// a failed write (a full volume) stops the pod's start rather than leave
// mpirun a hostfile that lacks hosts.
const writeHostsTemplate = `#!/bin/sh
# Rendered by trainfn: the job's hosts are too many to list in its
# ConfigMap, so this writes its hostfile and host discovery script when the
# launcher starts, and copies the ConfigMap's other files beside them.
set -eu
from=$1
to=$2
for f in "$from"/*; do
  cp "$f" "$to/"
done
i=0
{
{{listed}}  while [ "$i" -lt {{count}} ]; do
    {{hostLine}}
    i=$((i + 1))
  done
} >"$to/{{hostfile}}.tmp"
i=0
{
  echo '#!/bin/sh'
{{discovered}}  while [ "$i" -lt {{count}} ]; do
    {{discoverLine}}
    i=$((i + 1))
  done
} >"$to/{{discover}}.tmp"
chmod 0444 "$to/{{hostfile}}.tmp"
chmod 0555 "$to/{{discover}}.tmp"
mv "$to/{{hostfile}}.tmp" "$to/{{hostfile}}"
mv "$to/{{discover}}.tmp" "$to/{{discover}}"
`

// hostLine is a hostfile line without its newline, in the format Hostfile
// writes.
func hostLine(impl Implementation, name string, slots int32) string {
	if impl == OpenMPI {
		return name + " slots=" + strconv.Itoa(int(slots))
	}
	return name + ":" + strconv.Itoa(int(slots))
}

// printfLiteral is s in a printf format, where it stands for itself.
func printfLiteral(s string) string {
	return strings.NewReplacer(`%`, `%%`, `\`, `\\`).Replace(s)
}

// shellQuote is s as one word of a shell command, whatever it holds.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
