package handoff

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// DiscoverHostsKey is the key of the job's ConfigMap, and the file under
// the launcher's /etc/mpi, that holds Horovod's host discovery script. The
// render writes it for a job of a fixed size; for an elastic job it leaves
// the key out, and the reconciler writes it as workers come and go.
const DiscoverHostsKey = "discover_hosts.sh"

// Host is a host that takes work in a job, and how many processes it
// takes: a line of the hostfile and of the discovery script.
type Host struct {
	Name  string
	Slots int32
}

// DiscoverFormat is how the discovery script prints a host: as the
// operator of the job's apiVersion printed it, for the scripts written
// against that operator (horovodrun, and init containers that ssh to each
// line).
type DiscoverFormat string

const (
	// HostSlots prints "host:slots", as training-operator's MPIJob v1
	// controller did: Horovod reads the slots from the line.
	HostSlots DiscoverFormat = "host:slots"
	// HostOnly prints "host", as mpi-operator v2 does (since its commit
	// b9dbbc5, "Slots are handled through an environment variable"):
	// horovodrun then takes the slots from --slots-per-host.
	HostOnly DiscoverFormat = "host"
)

// DiscoverFormatAnnotation, on an elastic MPIJob's StatefulSet, is the
// DiscoverFormat the reconciler writes the script in; HostSlots when it
// is absent (what trainfn wrote before it had the annotation).
const DiscoverFormatAnnotation = "trainfn.dev/discover-hosts-format"

// DiscoverHosts writes Horovod's host discovery script
// (--host-discovery-script): one line per host that can take work, in the
// format given. Rendered, it lists every host; at run time the reconciler
// keeps it to the hosts that are up.
func DiscoverHosts(hosts []Host, format DiscoverFormat) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	for _, h := range hosts {
		b.WriteString(DiscoverLine(h.Name, h.Slots, format) + "\n")
	}
	return b.String()
}

// DiscoverLine is the discovery script's line for a host, without its
// newline. A launcher that writes the script itself (a job too large to
// list its hosts in its ConfigMap) prints the same lines.
func DiscoverLine(name string, slots int32, format DiscoverFormat) string {
	if format == HostOnly {
		return "echo " + name
	}
	return "echo " + name + ":" + strconv.Itoa(int(slots))
}

// ParseSlots reads a count of slots, the value of SlotsPerWorker or
// LauncherSlots: 0 or more, as an MPIJob's slotsPerWorker is (mpi-operator
// accepts 0, and writes it into the hostfile and the discovery script).
func ParseSlots(s string) (int32, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a count of slots, 0 or more", s)
	}
	return int32(n), nil
}

// ParseDiscoverHosts reads back the hosts a discovery script written by
// DiscoverHosts lists, in its order, in either format; a host printed
// without its slots has -1. Other lines are not hosts.
func ParseDiscoverHosts(script string) []Host {
	var hosts []Host
	for _, m := range discoverLine.FindAllStringSubmatch(script, -1) {
		slots := int64(-1)
		if m[2] != "" {
			var err error
			if slots, err = strconv.ParseInt(m[2], 10, 32); err != nil {
				continue
			}
		}
		hosts = append(hosts, Host{Name: m[1], Slots: int32(slots)})
	}
	return hosts
}

// discoverLine matches a line DiscoverLine writes.
var discoverLine = regexp.MustCompile(`(?m)^echo ([^:\s]+)(?::(\d+))?$`)
